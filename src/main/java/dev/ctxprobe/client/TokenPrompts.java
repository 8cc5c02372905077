package dev.ctxprobe.client;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds completion request bodies whose prompt is exactly {@code targetLen} token ids, distinct per
 * request so that no prefix cache can serve one request from another.
 *
 * <p>The body is written straight into one exactly sized {@code byte[]}: a 10M-token prompt is about
 * 60 MB of bytes, where a String or a {@code List<Integer>} would need several times that.
 */
public final class TokenPrompts {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final byte[] SUFFIX_HEAD = ascii("],\"max_tokens\":");
    private static final byte[] SUFFIX_TAIL = ascii(
            ",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true,\"temperature\":0}");

    private TokenPrompts() {}

    /**
     * The JSON body of one streaming completion request.
     *
     * @param model the served model name
     * @param targetLen the exact number of prompt token ids, at least 1
     * @param maxTokens {@code max_tokens}, the output length
     * @param range where ids come from
     * @param requestKey distinguishes requests: the first three ids spell it in base {@code range.span()}
     */
    public static byte[] body(String model, long targetLen, int maxTokens, TokenRange range, long requestKey) {
        if (targetLen < 1) {
            throw new IllegalArgumentException("targetLen must be at least 1, got " + targetLen);
        }
        if (requestKey < 0) {
            throw new IllegalArgumentException("requestKey must not be negative, got " + requestKey);
        }
        byte[] head = head(model);
        byte[] maxTokensDigits = ascii(Integer.toString(maxTokens));
        long size = (long) head.length + SUFFIX_HEAD.length + maxTokensDigits.length + SUFFIX_TAIL.length;
        size += targetLen - 1; // commas
        Ids sizing = new Ids(targetLen, range, requestKey);
        for (long i = 0; i < targetLen; i++) {
            size += digits(sizing.next());
        }
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "a prompt of " + targetLen + " tokens needs a " + size + "-byte body, beyond one Java array");
        }
        byte[] out = new byte[(int) size];
        int pos = put(out, 0, head);
        Ids ids = new Ids(targetLen, range, requestKey);
        for (long i = 0; i < targetLen; i++) {
            if (i > 0) {
                out[pos++] = ',';
            }
            pos = putInt(out, pos, ids.next());
        }
        pos = put(out, pos, SUFFIX_HEAD);
        pos = put(out, pos, maxTokensDigits);
        pos = put(out, pos, SUFFIX_TAIL);
        if (pos != out.length) {
            throw new IllegalStateException("body size computed as " + out.length + " but " + pos + " bytes written");
        }
        return out;
    }

    /** The JSON body of one streaming completion request whose prompt is {@code ids}, as given. */
    public static byte[] body(String model, int[] ids, int maxTokens) {
        byte[] head = head(model);
        byte[] maxTokensDigits = ascii(Integer.toString(maxTokens));
        long size = (long) head.length + SUFFIX_HEAD.length + maxTokensDigits.length + SUFFIX_TAIL.length;
        size += Math.max(0, ids.length - 1);
        for (int id : ids) {
            size += digits(id);
        }
        if (size > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "a prompt of " + ids.length + " tokens needs a " + size + "-byte body, beyond one Java array");
        }
        byte[] out = new byte[(int) size];
        int pos = put(out, 0, head);
        for (int i = 0; i < ids.length; i++) {
            if (i > 0) {
                out[pos++] = ',';
            }
            pos = putInt(out, pos, ids[i]);
        }
        pos = put(out, pos, SUFFIX_HEAD);
        pos = put(out, pos, maxTokensDigits);
        put(out, pos, SUFFIX_TAIL);
        return out;
    }

    private static byte[] head(String model) {
        // Jackson quotes and escapes the model name; everything else is ASCII we control.
        byte[] quotedModel = JSON.writeValueAsBytes(model);
        byte[] open = ascii("{\"model\":");
        byte[] prompt = ascii(",\"prompt\":[");
        byte[] head = new byte[open.length + quotedModel.length + prompt.length];
        int pos = put(head, 0, open);
        pos = put(head, pos, quotedModel);
        put(head, pos, prompt);
        return head;
    }

    /** Fixed width, so any two keys differ within the first ids (256^3 keys even for the embedded range). */
    private static final int KEY_IDS = 3;

    /** The deterministic id sequence of one request: its key's digits first, then seeded random ids. */
    private static final class Ids {
        private final TokenRange range;
        private final SplittableRandom random;
        private final long keyIds;
        private long key;
        private long emitted;

        Ids(long targetLen, TokenRange range, long requestKey) {
            this.range = range;
            // Seeding with the length too keeps the same request index apart across steps.
            this.random = new SplittableRandom(requestKey * 0x9E3779B97F4A7C15L ^ targetLen);
            this.key = requestKey;
            if (requestKey >= (long) range.span() * range.span() * range.span()) {
                throw new IllegalArgumentException(
                        "requestKey " + requestKey + " does not fit in " + KEY_IDS + " ids of range " + range);
            }
            this.keyIds = Math.min(KEY_IDS, targetLen);
        }

        int next() {
            if (emitted++ < keyIds) {
                int id = range.lo() + (int) (key % range.span());
                key /= range.span();
                return id;
            }
            return range.lo() + random.nextInt(range.span());
        }
    }

    private static int digits(int v) {
        int n = 1;
        while (v >= 10) {
            v /= 10;
            n++;
        }
        return n;
    }

    private static int putInt(byte[] out, int pos, int v) {
        int end = pos + digits(v);
        for (int i = end - 1; i >= pos; i--) {
            out[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
        return end;
    }

    private static int put(byte[] out, int pos, byte[] bytes) {
        System.arraycopy(bytes, 0, out, pos, bytes.length);
        return pos + bytes.length;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
