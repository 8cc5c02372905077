package dev.ctxprobe.client;

/**
 * How much the client reads of one response before it gives up on it: a server that streams without end, or sends
 * a body of gigabytes, must cost a failed request, not the client's memory.
 *
 * @param responseBytes the most one response may send: a whole stream, or a JSON body
 * @param eventBytes the most one server-sent event (one line) may hold
 */
public record ReadLimits(long responseBytes, int eventBytes) {
    /** A stream's share per output token in the default: an event per token is a few hundred bytes, logprobs more. */
    public static final long BYTES_PER_OUTPUT_TOKEN = 8192;

    /** The default before output: room for usage, errors, and any engine's framing. */
    public static final long BASE_RESPONSE_BYTES = 16L << 20;

    /** One event: no engine's event comes near this. */
    public static final int DEFAULT_EVENT_BYTES = 1 << 20;

    public ReadLimits {
        if (responseBytes < 1 || eventBytes < 1) {
            throw new IllegalArgumentException("read limits are positive, got " + responseBytes + ", " + eventBytes);
        }
    }

    /** Generous bounds for requests of {@code outputLen} tokens: 16 MiB plus 8 KiB per token, 1 MiB per event. */
    public static ReadLimits forOutput(int outputLen) {
        return new ReadLimits(BASE_RESPONSE_BYTES + BYTES_PER_OUTPUT_TOKEN * outputLen, DEFAULT_EVENT_BYTES);
    }

    /** The bounds an experiment asks for, the defaults where it gives none. */
    public static ReadLimits of(Long responseMib, Long eventKib, int outputLen) {
        ReadLimits d = forOutput(outputLen);
        return new ReadLimits(
                responseMib == null ? d.responseBytes() : responseMib << 20,
                eventKib == null ? d.eventBytes() : (int) (eventKib << 10));
    }

    /** A size for messages: {@code 16.0 MiB}, {@code 512 KiB}. */
    static String size(long bytes) {
        if (bytes >= 1L << 20) {
            return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
        }
        if (bytes >= 1L << 10) {
            return String.format(java.util.Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return bytes + " bytes";
    }
}
