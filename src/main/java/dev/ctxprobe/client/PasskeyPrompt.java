package dev.ctxprobe.client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * The pass-key prompt of one step (docs/search.md#the-frontier-of-right-answers): a unique opening (prefix caches
 * match prefixes), filler, a needle ("The pass key is 48213. Remember it.") at a depth, filler, and the cue "What is
 * the pass key? The pass key is". Every piece is tokenized by the server itself and the filler's ids are tiled and cut,
 * so the prompt is exactly {@code target} tokens; each request has a key of its own.
 *
 * <p>What every prompt of a backend shares (the opening's words, the filler, the cue) is tokenized once, as {@link
 * Pieces}; a request then costs one {@code /tokenize} call, for its needle. What makes an opening unique is a tag of
 * filler ids in an order no other request has (the step's nonce and the request's index, written in base
 * {@code distinct filler ids}), which needs no call.
 */
public final class PasskeyPrompt {

    static final String FILLER =
            "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back" + " again. ";
    static final String CUE = "\nWhat is the pass key? The pass key is";
    static final String OPENING = "A pass key is hidden in the text below. Find it and remember it. Document";
    /** Five digits: a few tokens in any tokenizer, and never a number the filler holds. */
    static final int KEY_DIGITS = 5;
    /** The bits of a step's nonce its tag spells: two steps on one kept server share a prefix once in 2^32. */
    private static final int NONCE_BITS = 32;

    private static final Pattern NUMBER = Pattern.compile("\\d+");

    private final long target;
    private final Pieces pieces;
    private final long nonce;
    private final Needle[] needles;

    /**
     * What every pass-key prompt of one backend shares, tokenized by its server once.
     *
     * @param opening the opening's words, as a prompt's start (with the model's BOS token where it adds one)
     * @param filler the filler's ids, tiled and cut to length
     * @param cue the question at the end
     * @param digits the filler's distinct ids, in their first order: the alphabet of the tags
     */
    public record Pieces(int[] opening, int[] filler, int[] cue, int[] digits) {

        /** The pieces from the server's ids of {@link #texts}, in that order. */
        static Pieces of(List<int[]> ids) throws IOException {
            int[] filler = ids.get(1);
            if (filler.length == 0) {
                throw new IOException("the server's tokenizer gave no ids for the filler text");
            }
            int[] digits = IntStream.of(filler).distinct().toArray();
            if (digits.length < 2) {
                throw new IOException("the server's tokenizer gave one id for the whole filler text");
            }
            return new Pieces(ids.get(0), filler, ids.get(2), digits);
        }

        /** What the pieces are made of: the opening, the filler, the cue. */
        static List<ServerTokenizer.Text> texts() {
            return List.of(
                    new ServerTokenizer.Text(OPENING, true),
                    new ServerTokenizer.Text(FILLER, false),
                    new ServerTokenizer.Text(CUE, false));
        }
    }

    /**
     * One request's own pieces: its opening (the shared words and its tag) and its needle, tokenized, the key the
     * needle holds and where it lies.
     *
     * @param depth where the needle lies in the filler: 0 at the start, 1 at the end
     */
    public record Needle(int[] opening, int[] needle, String key, double depth) {}

    private PasskeyPrompt(long target, Pieces pieces, long nonce, Needle[] needles) {
        this.target = target;
        this.pieces = pieces;
        this.nonce = nonce;
        this.needles = needles;
    }

    /**
     * A needle tokenized ahead of its step, on a warm server of the same backend: its key and the ids of its text.
     */
    public record Tokenized(String key, int[] ids) {}

    /**
     * Tokenizes the needles of {@code count} requests of {@code target} tokens, one {@code /tokenize} call each, all
     * at once; request {@code i} carries its needle at {@code depths[i % depths.length]}.
     *
     * @param known the backend's shared pieces; null the first time, when they are asked for in the same go (three
     *     calls more), and then kept in {@link #pieces()}
     * @param nonce makes the openings of this step differ from every other step's
     * @throws IOException when the server does not tokenize
     */
    public static PasskeyPrompt prepare(
            ServerTokenizer tokenizer, Pieces known, long target, int count, double[] depths, long nonce)
            throws IOException {
        return prepare(tokenizer, known, List.of(), target, count, depths, nonce);
    }

    /**
     * As {@link #prepare(ServerTokenizer, Pieces, long, int, double[], long)}, with the first requests' needles taken
     * from {@code ahead} (see {@link #tokenize}): only the rest cost a call.
     */
    public static PasskeyPrompt prepare(
            ServerTokenizer tokenizer,
            Pieces known,
            List<Tokenized> ahead,
            long target,
            int count,
            double[] depths,
            long nonce)
            throws IOException {
        int reused = Math.min(ahead.size(), count);
        List<ServerTokenizer.Text> texts = new ArrayList<>(known == null ? Pieces.texts() : List.of());
        int first = texts.size();
        List<Tokenized> fresh = needles(new SplittableRandom(nonce), count - reused);
        fresh.forEach(t -> texts.add(needleText(t.key())));
        List<int[]> ids = texts.isEmpty() ? List.of() : tokenizer.ids(texts);
        Pieces pieces = known != null ? known : Pieces.of(ids.subList(0, 3));
        Needle[] needles = new Needle[count];
        // The control, if it runs, is request `count` of the step: every tag has room for its index.
        int width = width(count, pieces.digits().length);
        for (int i = 0; i < count; i++) {
            Tokenized t = i < reused
                    ? ahead.get(i)
                    : new Tokenized(fresh.get(i - reused).key(), ids.get(first + i - reused));
            needles[i] = new Needle(opening(pieces, nonce, i, width), t.ids(), t.key(), depths[i % depths.length]);
        }
        return new PasskeyPrompt(target, pieces, nonce, needles);
    }

    /**
     * The needles of {@code count} requests of a later step, tokenized now, all at once, with fresh keys: asked on a
     * warm server after a step's requests, they spare the next step's cold server its calls.
     *
     * @throws IOException when the server does not tokenize
     */
    public static List<Tokenized> tokenize(ServerTokenizer tokenizer, int count, long seed) throws IOException {
        List<Tokenized> keys = needles(new SplittableRandom(seed), count);
        List<int[]> ids =
                tokenizer.ids(keys.stream().map(k -> needleText(k.key())).toList());
        List<Tokenized> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new Tokenized(keys.get(i).key(), ids.get(i)));
        }
        return out;
    }

    // Fresh keys, their ids still to be asked.
    private static List<Tokenized> needles(SplittableRandom random, int count) {
        List<Tokenized> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new Tokenized(Integer.toString(random.nextInt(10_000, 100_000)), new int[0]));
        }
        return out;
    }

    private static ServerTokenizer.Text needleText(String key) {
        return new ServerTokenizer.Text("\nThe pass key is " + key + ". Remember it.\n", false);
    }

    /** The backend's shared pieces this prompt was made of: the next step's need not ask for them again. */
    public Pieces pieces() {
        return pieces;
    }

    /**
     * The control of this step (docs/search.md#the-frontier-of-right-answers): one prompt of {@code length} tokens
     * with request 0's needle just after an opening of its own, the easiest place there is. It needs no call: its
     * key is request 0's, which the control's own request, a separate one, cannot have seen.
     */
    public PasskeyPrompt control(long length) {
        Needle first = needles[0];
        int width = width(needles.length, pieces.digits().length);
        Needle n = new Needle(opening(pieces, nonce, needles.length, width), first.needle(), first.key(), 0);
        return new PasskeyPrompt(length, pieces, nonce, new Needle[] {n});
    }

    // The shared words, then the tag: the nonce's bits, then the index, each a fixed number of filler ids.
    private static int[] opening(Pieces pieces, long nonce, int index, int indexWidth) {
        int[] digits = pieces.digits();
        int nonceWidth = width((1L << NONCE_BITS) - 1, digits.length);
        int[] out = Arrays.copyOf(pieces.opening(), pieces.opening().length + nonceWidth + indexWidth);
        long bits = new SplittableRandom(~nonce).nextLong() & ((1L << NONCE_BITS) - 1);
        spell(bits, digits, out, pieces.opening().length, nonceWidth);
        spell(index, digits, out, pieces.opening().length + nonceWidth, indexWidth);
        return out;
    }

    // How many digits of base `base` the number `most` needs; at least one.
    private static int width(long most, int base) {
        int w = 1;
        for (long v = most / base; v > 0; v /= base) {
            w++;
        }
        return w;
    }

    private static void spell(long value, int[] digits, int[] out, int at, int width) {
        long v = value;
        for (int k = width - 1; k >= 0; k--) {
            out[at + k] = digits[(int) (v % digits.length)];
            v /= digits.length;
        }
    }

    /** The tokens every request has besides filler; a target below this cannot hold a pass key. */
    public long fixedTokens() {
        long most = 0;
        for (Needle n : needles) {
            most = Math.max(most, (long) n.opening().length + n.needle().length + pieces.cue().length);
        }
        return most;
    }

    /** The number of requests prepared. */
    public int count() {
        return needles.length;
    }

    /** Request {@code i}'s key and depth. */
    public Needle needle(int i) {
        return needles[i];
    }

    /** Request {@code i}'s prompt: exactly {@code target} ids. */
    public int[] ids(int i) {
        Needle n = needles[i];
        long fill = target - n.opening().length - n.needle().length - pieces.cue().length;
        if (fill < 0 || target > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException(
                    "a prompt of " + target + " tokens cannot hold the pass key's " + fixedTokens() + " fixed tokens");
        }
        int before = (int) Math.round(n.depth() * fill);
        int[] out = new int[(int) target];
        int pos = copy(n.opening(), out, 0);
        pos = tile(out, pos, 0, before);
        pos = copy(n.needle(), out, pos);
        pos = tile(out, pos, before, (int) fill - before);
        pos = copy(pieces.cue(), out, pos);
        if (pos != out.length) {
            throw new IllegalStateException("pass-key prompt of " + pos + " ids for a target of " + target);
        }
        return out;
    }

    /** The first number in {@code text}, or null: what a model answered after the cue. */
    public static String answered(String text) {
        Matcher m = NUMBER.matcher(text == null ? "" : text);
        return m.find() ? m.group() : null;
    }

    // The filler flows on across the needle: the ids from `offset` of the endless filler, `length` of them.
    private int tile(int[] out, int pos, int offset, int length) {
        for (int k = 0; k < length; k++) {
            out[pos + k] = pieces.filler()[(offset + k) % pieces.filler().length];
        }
        return pos + length;
    }

    private static int copy(int[] from, int[] out, int pos) {
        System.arraycopy(from, 0, out, pos, from.length);
        return pos + from.length;
    }
}
