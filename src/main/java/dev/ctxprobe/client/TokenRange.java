package dev.ctxprobe.client;

/**
 * The half-open range {@code [lo, hi)} of token ids prompts are drawn from; ids a tokenizer maps
 * to ordinary text, away from special and control tokens.
 */
public record TokenRange(int lo, int hi) {

    /** Safe for the vocabularies of the usual served models (all are well above 30000 ids). */
    public static final TokenRange DEFAULT = new TokenRange(1000, 30000);

    /** The embedded engine's byte-level vocabulary: ids 3..258 are the 256 byte tokens. */
    public static final TokenRange EMBEDDED = new TokenRange(3, 259);

    public TokenRange {
        if (lo < 0 || hi <= lo) {
            throw new IllegalArgumentException("token range needs 0 <= lo < hi, got [" + lo + ", " + hi + ")");
        }
    }

    /**
     * Ids inside a vocabulary of {@code size} ids, as the server named it: the default range where it fits, else
     * the vocabulary without its first eighth (where vocabularies keep their special and control tokens) and its
     * last sixteenth (where added tokens go). A byte vocabulary of 260 ids gives [32, 244), all byte tokens.
     */
    public static TokenRange forVocabulary(int size) {
        if (size < 16) {
            throw new IllegalArgumentException("a vocabulary of " + size + " ids is too small for prompt filler");
        }
        int lo = Math.max(3, Math.min(DEFAULT.lo, size / 8));
        int hi = Math.min(DEFAULT.hi, size - Math.max(1, size / 16));
        return new TokenRange(lo, hi);
    }

    public int span() {
        return hi - lo;
    }

    public boolean contains(long id) {
        return id >= lo && id < hi;
    }
}
