package dev.ctxprobe.predict;

import java.util.Locale;

/** Numbers as the arithmetic lines print them: tokens and bytes with thousands separators, GiB to two places. */
final class Format {
    static final double GIB = 1L << 30;

    private Format() {}

    static String tokens(long n) {
        return String.format(Locale.US, "%,d", n);
    }

    static String bytes(long n) {
        return String.format(Locale.US, "%,d B", n);
    }

    /** Two decimals, as vLLM's {@code format_gib} prints its refusal. */
    static String gib(double bytes) {
        return String.format(Locale.US, "%.2f GiB", bytes / GIB);
    }

    /** A ratio or a size in bytes: thousands separators, at most four decimals, no trailing zeros. */
    static String decimal(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return String.format(Locale.US, "%,d", (long) v);
        }
        return String.format(Locale.US, "%,.4f", v).replaceAll("0+$", "");
    }
}
