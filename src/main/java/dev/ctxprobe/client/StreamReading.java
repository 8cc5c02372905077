package dev.ctxprobe.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;
import okio.Buffer;
import okio.BufferedSource;
import okio.ForwardingSource;
import okio.Source;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.json.JsonMapper;

/**
 * What one response has shown so far, read event by event; survives an exception part-way through. Events are
 * read as bytes and walked with Jackson's token stream, with no tree and no string per line, because at 1000
 * streams on few cores every microsecond spent per event delays the arrival stamps of the other streams.
 */
final class StreamReading {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final byte[] DATA = ascii("data:");
    private static final byte[] DONE = ascii("[DONE]");
    private static final byte[] ERROR = ascii("error:");
    static final int TEXT_HEAD_CHARS = 64;
    private static final byte[][] IGNORED_FIELDS = {ascii("event:"), ascii("id:"), ascii("retry:")};

    int status;
    RequestOutcome outcome;
    String errorText;
    Integer promptTokens;
    /** {@code usage.prompt_tokens} as written, when it was there but no whole number ("1024" as text, 1e400). */
    String promptTokensWritten;

    Integer completionTokens;
    /** Prompt tokens the server took from its cache (docs/results.md, "% of roofline"); null when not reported. */
    Integer cachedTokens;

    String finishReason;
    int choiceEvents;
    boolean sawDone;
    long tFirst;
    long tLast;
    CountingSource counting;
    /** The first event that carried neither choices, usage nor an error: what a server said instead. */
    private String unrecognized;
    /**
     * The start of the first choice's text, up to {@link #TEXT_HEAD_CHARS}: where a pass key's answer is read
     * (docs/results.md#answer). Only this much is kept, so a long output costs nothing more.
     */
    final StringBuilder textHead = new StringBuilder();
    /** Run once, right after the first token's arrival was stamped; null for none. */
    Runnable onFirstToken;

    private double[] itlMs = new double[16];
    private byte[] line = new byte[1024];
    private final ReadLimits limits;

    StreamReading(ReadLimits limits) {
        this.limits = limits;
    }

    /** A response that went past a read limit: the server sent more than any answer needs. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(String message) {
            super(message);
        }
    }

    /** Reads server-sent events to {@code [DONE]}, the end of the stream, or the first error. */
    void readEvents(BufferedSource source) throws IOException {
        int length;
        while ((length = readLine(source)) >= 0) {
            // The read that completed this line, taken before any parsing.
            long arrival = counting.lastReadNanos;
            if (length == 0 || line[0] == ':') {
                continue;
            }
            if (!startsWith(DATA, length)) {
                if (startsWith(ERROR, length)) {
                    // llama.cpp of early 2025 sends a refusal as an "error:" field instead of a data event.
                    int from = length > ERROR.length && line[ERROR.length] == ' ' ? ERROR.length + 1 : ERROR.length;
                    outcome = RequestOutcome.ERROR_EVENT;
                    errorText = truncate(text(from, length));
                    return;
                }
                if (isIgnoredField(length)) {
                    continue;
                }
                outcome = RequestOutcome.PROTOCOL_ERROR;
                errorText = "not a server-sent event line: " + truncate(text(0, length));
                return;
            }
            int from = length > DATA.length && line[DATA.length] == ' ' ? DATA.length + 1 : DATA.length;
            if (isBlank(from, length)) {
                continue;
            }
            if (length - from == DONE.length && Arrays.equals(line, from, length, DONE, 0, DONE.length)) {
                sawDone = true;
                break;
            }
            if (!event(line, from, length, arrival)) {
                return;
            }
        }
        if (!sawDone && promptTokens == null && choiceEvents > 0) {
            // Neither [DONE] nor usage: the server closed the stream early, an incomplete answer (docs/results.md).
            outcome = RequestOutcome.CONNECTION_FAILED;
            errorText = "the stream ended after " + choiceEvents + " events without usage or [DONE]";
            return;
        }
        noChoicesOrOk();
    }

    /** A server that ignored {@code stream: true} answers with one JSON document, read up to the response limit. */
    void readJsonBody(BufferedSource source) throws IOException {
        byte[] body = source.readByteArray();
        if (event(body, 0, body.length, counting.lastReadNanos)) {
            noChoicesOrOk();
        }
    }

    private void noChoicesOrOk() {
        if (choiceEvents > 0) {
            outcome = RequestOutcome.OK;
            return;
        }
        outcome = RequestOutcome.NO_CHOICES;
        errorText = unrecognized != null
                ? "no event carried choices; the server sent: " + unrecognized
                : "no event carried choices (" + counting.bytes + " bytes received)";
    }

    List<Double> itlMs() {
        List<Double> gaps = new ArrayList<>(Math.max(0, choiceEvents - 1));
        for (int i = 0; i < choiceEvents - 1; i++) {
            gaps.add(itlMs[i]);
        }
        return gaps;
    }

    /** The length of the next line, without its terminator, read into {@link #line}; -1 at the end. */
    private int readLine(BufferedSource source) throws IOException {
        long newline = source.indexOf((byte) '\n', 0, limits.eventBytes());
        long length = newline;
        if (newline == -1) {
            Buffer buffered = source.getBuffer();
            if (buffered.size() >= limits.eventBytes()) {
                throw new TooLarge("the server sent more than " + ReadLimits.size(limits.eventBytes())
                        + " in one event without ending it (limits.event_kib)");
            }
            // indexOf read to the end of the stream: what is buffered is the last, unterminated line.
            if (source.exhausted()) {
                return -1;
            }
            length = buffered.size();
        }
        int n = (int) length;
        if (n > line.length) {
            line = new byte[Math.max(n, line.length * 2)];
        }
        for (int done = 0; done < n; ) {
            // Only buffered bytes are read here, so this ends; a segment boundary can split them.
            done += source.read(line, done, n - done);
        }
        if (newline != -1) {
            source.skip(1);
        }
        return n > 0 && line[n - 1] == '\r' ? n - 1 : n;
    }

    /** Takes in one event's JSON; false when it was an error event or not JSON, and reading should stop. */
    private boolean event(byte[] data, int from, int to, long arrival) {
        boolean error = false;
        boolean choices = false;
        boolean usage = false;
        Integer prompt = null;
        String promptWritten = null;
        Integer completion = null;
        Integer cached = null;
        String reason = null;
        boolean trailing;
        try (JsonParser p = JSON.createParser(data, from, to - from)) {
            if (p.nextToken() == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                    String name = p.currentName();
                    JsonToken value = p.nextToken();
                    switch (name) {
                        case "object" -> {
                            // vLLM's older servers stream an error as {"object": "error", "message": ...}.
                            error |= value == JsonToken.VALUE_STRING && "error".equals(p.getString());
                        }
                        case "error" -> {
                            error = value != JsonToken.VALUE_NULL;
                            p.skipChildren();
                        }
                        case "choices" -> {
                            if (value == JsonToken.START_ARRAY) {
                                choices = p.nextToken() != JsonToken.END_ARRAY;
                                if (choices) {
                                    reason = firstChoice(p);
                                }
                            } else {
                                p.skipChildren();
                            }
                        }
                        case "usage" -> {
                            usage = value == JsonToken.START_OBJECT;
                            if (usage) {
                                while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                                    String field = p.currentName();
                                    p.nextToken();
                                    if (field.equals("prompt_tokens")) {
                                        prompt = intOrNull(p);
                                        promptWritten = prompt == null ? written(p) : null;
                                    } else if (field.equals("completion_tokens")) {
                                        completion = intOrNull(p);
                                    } else if (field.equals("cached_tokens")) {
                                        cached = intOrNull(p);
                                    } else if (field.equals("prompt_tokens_details")) {
                                        cached = orElse(nested(p, "cached_tokens"), cached);
                                    }
                                    p.skipChildren();
                                }
                            } else {
                                p.skipChildren();
                            }
                        }
                        // llama.cpp's timings.cache_n, SGLang's native meta_info.cached_tokens.
                        case "timings" -> cached = orElse(nested(p, "cache_n"), cached);
                        case "meta_info" -> cached = orElse(nested(p, "cached_tokens"), cached);
                        default -> p.skipChildren();
                    }
                }
            } else {
                p.skipChildren();
            }
            trailing = p.nextToken() != null;
        } catch (JacksonException e) {
            return notJson(e.getOriginalMessage(), data, from, to);
        }
        if (trailing) {
            return notJson("content after the JSON value", data, from, to);
        }
        if (error) {
            outcome = RequestOutcome.ERROR_EVENT;
            errorText = truncate(text(data, from, to));
            return false;
        }
        if (usage) {
            promptTokens = prompt;
            promptTokensWritten = promptWritten;
            completionTokens = completion;
        }
        if (cached != null) {
            cachedTokens = cached;
        }
        if (!usage && !choices && unrecognized == null) {
            unrecognized = truncate(text(data, from, to));
        }
        if (choices) {
            if (choiceEvents > 0) {
                if (choiceEvents > itlMs.length) {
                    itlMs = Arrays.copyOf(itlMs, itlMs.length * 2);
                }
                itlMs[choiceEvents - 1] = (arrival - tLast) / 1e6;
            } else {
                tFirst = arrival;
                if (onFirstToken != null) {
                    onFirstToken.run();
                }
            }
            tLast = arrival;
            choiceEvents++;
            if (reason != null) {
                finishReason = reason;
            }
        }
        return true;
    }

    private boolean notJson(String why, byte[] data, int from, int to) {
        outcome = RequestOutcome.PROTOCOL_ERROR;
        errorText = "event is not valid JSON: " + why + ": " + truncate(text(data, from, to));
        return false;
    }

    /**
     * With the parser on the first element of a non-empty {@code choices} array: that choice's string
     * {@code finish_reason} or null, leaving the parser on the array's end; its {@code text} goes to {@link
     * #textHead} while that is short.
     */
    private String firstChoice(JsonParser p) {
        String reason = null;
        if (p.currentToken() == JsonToken.START_OBJECT) {
            while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                String field = p.currentName();
                if (p.nextToken() == JsonToken.VALUE_STRING) {
                    if (field.equals("finish_reason")) {
                        reason = p.getString();
                    } else if (field.equals("text") && textHead.length() < TEXT_HEAD_CHARS) {
                        String text = p.getString();
                        textHead.append(text, 0, Math.min(text.length(), TEXT_HEAD_CHARS - textHead.length()));
                    }
                }
                p.skipChildren();
            }
        } else {
            p.skipChildren();
        }
        while (p.nextToken() != JsonToken.END_ARRAY) {
            p.skipChildren();
        }
        return reason;
    }

    // A value that is there but is no count, as the server wrote it; null for JSON's null (not reported).
    private static String written(JsonParser p) {
        JsonToken token = p.currentToken();
        if (token == JsonToken.VALUE_NULL || token == null) {
            return null;
        }
        if (token == JsonToken.VALUE_STRING) {
            return "\"" + truncate(p.getString()) + "\"";
        }
        return token.isScalarValue() ? truncate(p.getText()) : token == JsonToken.START_OBJECT ? "an object" : "a list";
    }

    /** The whole-number field {@code name} of the object the parser is at, which is read to its end. */
    private static Integer nested(JsonParser p, String name) {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            return null;
        }
        Integer found = null;
        while (p.nextToken() == JsonToken.PROPERTY_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (field.equals(name)) {
                found = intOrNull(p);
            }
            p.skipChildren();
        }
        return found;
    }

    private static Integer orElse(Integer value, Integer fallback) {
        return value != null ? value : fallback;
    }

    private static Integer intOrNull(JsonParser p) {
        JsonToken token = p.currentToken();
        if (token != JsonToken.VALUE_NUMBER_INT && token != JsonToken.VALUE_NUMBER_FLOAT) {
            return null;
        }
        double value = p.getDoubleValue();
        return value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE ? (int) value : null;
    }

    private boolean startsWith(byte[] prefix, int length) {
        return length >= prefix.length && Arrays.equals(line, 0, prefix.length, prefix, 0, prefix.length);
    }

    private boolean isIgnoredField(int length) {
        for (byte[] field : IGNORED_FIELDS) {
            if (startsWith(field, length)) {
                return true;
            }
        }
        return false;
    }

    private boolean isBlank(int from, int to) {
        for (int i = from; i < to; i++) {
            if (!Character.isWhitespace(line[i])) {
                return false;
            }
        }
        return true;
    }

    private String text(int from, int to) {
        return text(line, from, to);
    }

    private static String text(byte[] data, int from, int to) {
        return new String(data, from, to - from, StandardCharsets.UTF_8);
    }

    private static String truncate(String text) {
        return text.length() <= CompletionClient.ERROR_HEAD_BYTES
                ? text
                : text.substring(0, CompletionClient.ERROR_HEAD_BYTES);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Counts body bytes and stamps each read: events that came in one read share its arrival time, which is when
     * the client could first have seen them.
     */
    static final class CountingSource extends ForwardingSource {
        long bytes;
        long lastReadNanos;
        private final long limit;
        private final LongSupplier arrival;

        /**
         * @param limit the most bytes the response may have; one more ends it
         * @param arrival when the bytes just read were first there to read (the transport's stamp)
         */
        CountingSource(Source delegate, long limit, LongSupplier arrival) {
            super(delegate);
            this.limit = limit;
            this.arrival = arrival;
        }

        @Override
        public long read(Buffer sink, long byteCount) throws IOException {
            long read = super.read(sink, byteCount);
            if (read > 0) {
                lastReadNanos = arrival.getAsLong();
                bytes += read;
                if (bytes > limit) {
                    throw new TooLarge("the server sent more than " + ReadLimits.size(limit)
                            + " for one response (limits.response_mib)");
                }
            }
            return read;
        }
    }
}
