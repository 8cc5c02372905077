package dev.ctxprobe.engine;

/**
 * Token ids that are safe to repeat as prompt filler for an engine: {@code lo} inclusive, {@code hiExclusive}
 * exclusive.
 */
public record TokenRange(int lo, int hiExclusive) {

    public TokenRange {
        if (lo < 0 || hiExclusive <= lo) {
            throw new IllegalArgumentException(
                    "token range needs 0 <= lo < hiExclusive, got [" + lo + ", " + hiExclusive + ")");
        }
    }

    /** How many distinct ids the range holds. */
    public int size() {
        return hiExclusive - lo;
    }
}
