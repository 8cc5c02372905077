package dev.ctxprobe.launch;

import dev.ctxprobe.client.PlainGet;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.time.Duration;

/**
 * One GET of a server's readiness path, as every launcher polls it, over the client's GET ({@link PlainGet#status}):
 * bounded as a whole, from connecting to the response head at most {@link #LIMIT} (and never past the caller's
 * deadline), so that a server that answers a byte at a time, or accepts and says nothing, costs no more than that (a
 * read timeout between bytes alone let a trickled /health body hold readiness forever). Only the head is read. A
 * thread interrupt (a Ctrl-C) ends the wait at once, closing the socket, and stays set for the caller.
 */
public final class HealthProbe {
    /** The most one probe takes. */
    public static final Duration LIMIT = Duration.ofSeconds(2);

    private HealthProbe() {}

    /**
     * What one probe saw.
     *
     * @param status the HTTP status, -1 when nothing answered, -2 when no status line came within {@code waited}
     */
    public record Answer(int status, Duration waited) {
        /**
         * Whether the caller's deadline, not the server, ended this probe before {@link #LIMIT}: with a sliver of
         * time left it says only that the sliver passed ("no status line within 0 ms" of a port that refuses).
         */
        public boolean cutShort() {
            return status == -2 && waited.compareTo(LIMIT) < 0;
        }

        /** For messages: {@code HTTP 503}, {@code connection refused}, {@code no status line within 2000 ms}. */
        public String describe() {
            return switch (status) {
                case -1 -> "connection refused";
                case -2 -> "no status line within " + waited.toMillis() + " ms";
                default -> "HTTP " + status;
            };
        }
    }

    /** The HTTP status of a GET, or -1 when nothing answers within {@link #LIMIT} (refused, reset, silent). */
    public static int status(URI uri) {
        int status = probe(uri, System.nanoTime() + LIMIT.toNanos()).status();
        return status == -2 ? -1 : status;
    }

    /** One probe of {@code uri}, ending by {@code deadlineNanos} ({@link System#nanoTime()}) at the latest. */
    public static Answer probe(URI uri, long deadlineNanos) {
        long budget = Math.max(1, Math.min(LIMIT.toNanos(), deadlineNanos - System.nanoTime()));
        try {
            return new Answer(PlainGet.status(uri.toString(), Duration.ofNanos(budget), "ctxprobe-readiness"), null);
        } catch (SocketTimeoutException slow) {
            return new Answer(-2, Duration.ofNanos(budget));
        } catch (IOException notYetOrInterrupted) {
            // Refused, reset, not HTTP yet; or a Ctrl-C, whose interrupt PlainGet keeps set for the caller.
            return new Answer(-1, null);
        }
    }
}
