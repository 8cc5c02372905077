package dev.ctxprobe.report;

import java.util.Locale;

/** HTML escaping for text taken from results files and logs. */
final class Html {
    private Html() {}

    /**
     * Text as HTML character data or a quoted attribute value: the five markup characters become entities,
     * and control characters (other than line breaks and tabs) become visible escapes.
     */
    static String escape(String raw) {
        if (raw == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(raw.length() + 16);
        raw.codePoints().forEach(cp -> {
            switch (cp) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&#39;");
                case '\n', '\r', '\t' -> out.appendCodePoint(cp);
                default -> {
                    if (Character.isISOControl(cp)) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", cp));
                    } else {
                        out.appendCodePoint(cp);
                    }
                }
            }
        });
        return out.toString();
    }
}
