package dev.ctxprobe.launch;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The lines engines print when they have just started serving: seeing one, the launcher probes readiness at once
 * instead of at its next poll. A line is only a hint (uvicorn says "Application startup complete" a moment before it
 * binds, and a server may print a line like it in a message about something else): readiness is still the
 * readiness path answering 200.
 */
final class ReadyLines {
    /** llama-server, vLLM's and LMDeploy's uvicorn, SGLang, TGI's router. */
    static final List<String> TEXTS = List.of(
            "server is listening on",
            "Application startup complete",
            "Uvicorn running on",
            "The server is fired up and ready to roll",
            "Connected");

    /** The length of the longest text, in bytes. */
    static final int LONGEST = TEXTS.stream()
            .mapToInt(t -> t.getBytes(StandardCharsets.US_ASCII).length)
            .max()
            .orElseThrow();

    private ReadyLines() {}

    /** Whether {@code output} holds one of the texts; bytes outside ASCII never match. */
    static boolean in(byte[] output) {
        String text = new String(output, StandardCharsets.ISO_8859_1);
        for (String t : TEXTS) {
            if (text.contains(t)) {
                return true;
            }
        }
        return false;
    }
}
