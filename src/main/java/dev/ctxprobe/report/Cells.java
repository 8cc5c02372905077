package dev.ctxprobe.report;

import java.math.BigDecimal;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.Locale;

/** Formatting of numbers and untrusted strings shared by every report format; fixed locale, so output is stable. */
final class Cells {
    private static final DecimalFormatSymbols SYMBOLS = DecimalFormatSymbols.getInstance(Locale.US);

    private Cells() {}

    /** A string of a results file that may be absent, as shown: absent is empty. */
    static String text(String value) {
        return value == null ? "" : value;
    }

    /** A token count with thousands separators: {@code 917,504}; empty when unknown. */
    static String tokens(Long value) {
        return value == null ? "" : new DecimalFormat("#,##0", SYMBOLS).format(value);
    }

    /** A value with one decimal and thousands separators, for milliseconds: {@code 3,715.6}. */
    static String oneDecimal(Double value) {
        return finite(value) ? new DecimalFormat("#,##0.0", SYMBOLS).format(value) : "";
    }

    /** A value rounded to a whole number with thousands separators, for tokens per second. */
    static String whole(Double value) {
        return finite(value) ? new DecimalFormat("#,##0", SYMBOLS).format(value) : "";
    }

    /** A duration for people: {@code 521 ms} below a second, {@code 3.7 s} above. */
    static String duration(double ms) {
        if (ms < 1000) {
            return new DecimalFormat("0", SYMBOLS).format(ms) + " ms";
        }
        return new DecimalFormat("#,##0.0", SYMBOLS).format(ms / 1000) + " s";
    }

    /** A number as written for machines: no grouping, no exponent, the shortest digits that read back exactly. */
    static String plainNumber(Double value) {
        if (value == null) {
            return "";
        }
        if (!Double.isFinite(value)) {
            return value.toString();
        }
        return new BigDecimal(Double.toString(value)).stripTrailingZeros().toPlainString();
    }

    /** A ratio as a percentage with one decimal: {@code 0.125} is {@code 12.5%}. */
    static String percent(Double ratio) {
        return finite(ratio) ? new DecimalFormat("0.0", SYMBOLS).format(ratio * 100) + "%" : "";
    }

    private static boolean finite(Double value) {
        return value != null && Double.isFinite(value);
    }
}
