package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One GET of a server's readiness path, as every launcher polls it, bounded as a whole: from connecting to the
 * status line at most {@link #LIMIT} (and never past the caller's deadline), so that a server that answers a byte at
 * a time, or accepts and says nothing, costs no more than that. A read timeout between bytes alone let a /health
 * body trickled a byte every 1.5 s hold readiness forever. Only the status line is read. The wait is on another
 * thread: a thread interrupt (a Ctrl-C) ends it at once, closing the socket, and stays set for the caller.
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
        Socket socket = new Socket();
        FutureTask<Integer> get = new FutureTask<>(() -> statusOf(socket, uri, budget));
        Thread.ofVirtual().name("ctxprobe-readiness").start(get);
        try {
            return new Answer(get.get(budget, TimeUnit.NANOSECONDS), null);
        } catch (TimeoutException slow) {
            return new Answer(-2, Duration.ofNanos(budget));
        } catch (ExecutionException notYet) {
            return new Answer(-1, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(-1, null);
        } finally {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Closing is all that was asked of it.
            }
        }
    }

    private static int statusOf(Socket socket, URI uri, long budgetNanos) throws IOException {
        int millis = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(budgetNanos));
        int port = uri.getPort() < 0 ? 80 : uri.getPort();
        socket.connect(new InetSocketAddress(uri.getHost(), port), millis);
        socket.setSoTimeout(millis);
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + uri.getRawAuthority()
                        + "\r\nConnection: close\r\nAccept: */*\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        StringBuilder line = new StringBuilder();
        for (int c; line.length() < 256 && (c = in.read()) >= 0 && c != '\n'; ) {
            line.append((char) c);
        }
        String[] words = line.toString().strip().split(" ");
        if (words.length < 2 || !words[0].startsWith("HTTP/") || !words[1].matches("\\d{3}")) {
            throw new IOException("not an HTTP answer: " + line);
        }
        return Integer.parseInt(words[1]);
    }
}
