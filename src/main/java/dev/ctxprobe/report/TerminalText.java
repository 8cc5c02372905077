package dev.ctxprobe.report;

import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Text that came from outside ctxprobe (a server's body, event or log line, a name or value from a file) made safe
 * for a terminal: the one sanitizer of the console and the text reports. Control characters, which could clear the
 * screen, set the window title (OSC), ring the bell or move the cursor, become visible {@code \\uXXXX} escapes, as
 * do the Unicode line and paragraph separators; so the terminal gets text, never a sequence from outside
 * (docs/failures.md#what-the-console-shows).
 */
public final class TerminalText {
    private TerminalText() {}

    /** {@code raw} for one line: line breaks and tabs become spaces, other control characters escapes. */
    public static String line(String raw) {
        if (raw == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(raw.length());
        raw.codePoints().forEach(cp -> {
            if (cp == '\n' || cp == '\r' || cp == '\t') {
                out.append(' ');
            } else if (Character.isISOControl(cp) || cp == 0x2028 || cp == 0x2029) {
                out.append(String.format(Locale.ROOT, "\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }

    /** {@code raw} over several lines: each kept on its own line, made safe as {@link #line} makes it. */
    public static String lines(String raw) {
        if (raw == null) {
            return "";
        }
        return raw.lines().map(TerminalText::line).collect(Collectors.joining("\n"));
    }
}
