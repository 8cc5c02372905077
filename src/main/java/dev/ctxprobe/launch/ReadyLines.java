package dev.ctxprobe.launch;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The lines an engine prints when it has just started serving (its profile names them): seeing one, the launcher
 * probes readiness at once instead of at its next poll. A line is only a hint (uvicorn says "Application startup
 * complete" a moment before it binds, and a server may print a line like it in a message about something else):
 * readiness is still the readiness path answering 200.
 *
 * @param texts what to look for, each at most {@link #MAX_BYTES} bytes of ASCII
 */
record ReadyLines(List<String> texts) {

    /** The longest text a line may be: the log copier keeps this much of each read to see a text split by reads. */
    static final int MAX_BYTES = 256;

    ReadyLines {
        texts = List.copyOf(texts);
        for (String t : texts) {
            if (t.isEmpty() || t.getBytes(StandardCharsets.US_ASCII).length > MAX_BYTES) {
                throw new IllegalArgumentException("a ready line must have 1 to " + MAX_BYTES + " bytes: '" + t + "'");
            }
        }
    }

    /** The length of the longest text, in bytes; 0 for none. */
    int longest() {
        return texts.stream()
                .mapToInt(t -> t.getBytes(StandardCharsets.US_ASCII).length)
                .max()
                .orElse(0);
    }

    /** Whether {@code output} holds one of the texts; bytes outside ASCII never match. */
    boolean in(byte[] output) {
        return endOfLast(output) >= 0;
    }

    /** The index just past the last text that {@code output} holds; -1 when it holds none. */
    int endOfLast(byte[] output) {
        String text = new String(output, StandardCharsets.ISO_8859_1);
        int end = -1;
        for (String t : texts) {
            int at = text.lastIndexOf(t);
            if (at >= 0) {
                end = Math.max(end, at + t.length());
            }
        }
        return end;
    }
}
