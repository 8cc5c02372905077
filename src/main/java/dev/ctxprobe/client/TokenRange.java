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

    public int span() {
        return hi - lo;
    }

    public boolean contains(long id) {
        return id >= lo && id < hi;
    }
}
