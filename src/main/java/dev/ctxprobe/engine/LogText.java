package dev.ctxprobe.engine;

import java.util.Locale;
import java.util.regex.Pattern;

/** Small text helpers shared by the profiles' rules. */
final class LogText {

    /**
     * A number as engines print it, plain or with thousands separators ({@code 1,234,567}); bounded so that it
     * always fits a long.
     */
    static final String NUM = "(\\d{1,3}(?:,\\d{3}){1,5}(?!\\d)|\\d{1,18}(?!\\d))";

    // Engines colour their logs (TGI by default); colour codes would split the texts we look for.
    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;?]*[A-Za-z]");
    private static final Pattern STAMP =
            Pattern.compile("^\\s*\\d+\\.\\d{2}\\.\\d{3}\\.\\d{3} [IWEDT] (?:\\w{3,4} +)?");

    private LogText() {}

    static Pattern pattern(String regex) {
        return Pattern.compile(regex, Pattern.CASE_INSENSITIVE);
    }

    /** A log line without llama.cpp's time and level prefix ({@code 0.02.685.161 E }), for a sentence. */
    static String withoutStamp(String line) {
        return STAMP.matcher(line).replaceFirst("");
    }

    static String clean(String line) {
        return ANSI.matcher(line == null ? "" : line).replaceAll("").replace("\r", "");
    }

    static long parseNumber(String digits) {
        return Long.parseLong(digits.replace(",", ""));
    }

    static String fmt(Long n) {
        return n == null ? "?" : String.format(Locale.ROOT, "%,d", n);
    }

    /** Shortens a long line to about {@code max} chars, keeping the part around {@code focus}. */
    static String around(String line, int focus, int max) {
        String s = line.strip();
        if (s.length() <= max) {
            return s;
        }
        int shift = line.indexOf(s);
        int start = Math.max(0, Math.min(focus - shift - max / 3, s.length() - max));
        String cut = s.substring(start, start + max);
        return (start > 0 ? "…" : "") + cut + (start + max < s.length() ? "…" : "");
    }

    static String head(String line, int max) {
        return around(line, 0, max);
    }
}
