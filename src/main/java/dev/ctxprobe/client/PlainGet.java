package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okio.BufferedSource;
import okio.Okio;

/**
 * One GET of an {@code http://} URL on a connection of its own ({@link Http1Exchange}), bounded as a whole: the
 * connect, the head and the body all come within the timeout or the socket is closed. The exchange runs on a virtual
 * thread while the caller waits, so a thread interrupt (a Ctrl-C) ends it at once too. No redirects, compression or
 * TLS: every server ctxprobe asks is one it launched or was given as host and port ({@code launch.Endpoint}). It
 * replaced OkHttp for these few GETs, whose classes (with TLS set up whether used or not) cost about 10 MB of the
 * peak resident memory of a run (BENCHMARKS.md, "Memory and start-up").
 */
final class PlainGet {

    /** The status and the body as UTF-8; the body is null when it ran past the limit. */
    record Answer(String url, int status, String body) {}

    private PlainGet() {}

    /**
     * {@code GET url}, with {@code authorization} as the header of that name when not null, reading at most {@code
     * maxBytes} of the body.
     *
     * @throws InterruptedIOException when the timeout ran out, or the thread was interrupted (its status is kept)
     * @throws IOException when the URL is not {@code http://}, the server cannot be reached or breaks HTTP/1.1
     */
    static Answer get(String url, String authorization, Duration timeout, long maxBytes, String threadName)
            throws IOException {
        Http1Exchange.Target target;
        try {
            target = Http1Exchange.Target.of(url);
        } catch (IllegalArgumentException e) {
            throw new IOException("cannot GET " + url + ": " + e.getMessage(), e);
        }
        String headers = authorization == null ? "" : "Authorization: " + authorization + "\r\n";
        int millis = (int) Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE);
        Http1Exchange exchange = Http1Exchange.unconnected();
        FutureTask<Answer> task = new FutureTask<>(() -> {
            exchange.connect(target, millis);
            exchange.get(target, headers);
            Http1Exchange.Head head = exchange.readHead();
            BufferedSource body = Okio.buffer(exchange.body(head));
            body.request(maxBytes + 1);
            String text =
                    body.getBuffer().size() > maxBytes ? null : body.getBuffer().readString(StandardCharsets.UTF_8);
            return new Answer(url, head.status(), text);
        });
        Thread.ofVirtual().name(threadName).start(task);
        try {
            return task.get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while asking " + url);
        } catch (TimeoutException e) {
            throw new InterruptedIOException("GET " + url + " did not answer within " + millis + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("GET " + url + " failed: " + e.getCause(), e.getCause());
        } finally {
            exchange.close();
        }
    }
}
