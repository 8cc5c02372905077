package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
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
 * connect, the head and what is read of the body all come within the timeout or the socket is closed. The exchange
 * runs on a virtual thread while the caller waits, so a thread interrupt (a Ctrl-C) ends it at once too. No
 * redirects, compression or TLS: every server ctxprobe asks is one it launched or was given as host and port ({@code
 * launch.Endpoint}). Both the server queries and the launchers' readiness polls use it, so ctxprobe speaks HTTP in
 * one place. It replaced OkHttp for these few GETs, whose classes (with TLS set up whether used or not) weighed on
 * the peak resident memory of a run (BENCHMARKS.md, "Memory and start-up").
 */
public final class PlainGet {

    /** The status and the body as UTF-8; the body is null when it ran past the limit. */
    record Answer(String url, int status, String body) {}

    /** What is read of a response once its head is in: the body, or nothing more. */
    @FunctionalInterface
    private interface Reading<T> {
        T read(Http1Exchange exchange, Http1Exchange.Head head) throws IOException;
    }

    private PlainGet() {}

    /**
     * {@code GET url}, with {@code authorization} as the header of that name when not null, reading at most {@code
     * maxBytes} of the body.
     *
     * @throws InterruptedIOException when the timeout ran out ({@link SocketTimeoutException}), or the thread was
     *     interrupted (its status is kept)
     * @throws IOException when the URL is not {@code http://}, the server cannot be reached or breaks HTTP/1.1
     */
    static Answer get(String url, String authorization, Duration timeout, long maxBytes, String threadName)
            throws IOException {
        String headers = authorization == null ? "" : "Authorization: " + authorization + "\r\n";
        return exchange(
                url, headers, null, timeout, threadName, (exchange, head) -> answer(url, exchange, head, maxBytes));
    }

    /**
     * {@code POST url} of a JSON body, as {@link #get} otherwise: a server's {@code /tokenize} (docs/search.md#the-frontier-of-right-answers).
     */
    static Answer postJson(
            String url, String authorization, byte[] json, Duration timeout, long maxBytes, String threadName)
            throws IOException {
        String headers = authorization == null ? "" : "Authorization: " + authorization + "\r\n";
        return exchange(
                url, headers, json, timeout, threadName, (exchange, head) -> answer(url, exchange, head, maxBytes));
    }

    private static Answer answer(String url, Http1Exchange exchange, Http1Exchange.Head head, long maxBytes)
            throws IOException {
        BufferedSource body = Okio.buffer(exchange.body(head));
        body.request(maxBytes + 1);
        String text =
                body.getBuffer().size() > maxBytes ? null : body.getBuffer().readString(StandardCharsets.UTF_8);
        return new Answer(url, head.status(), text);
    }

    /**
     * The HTTP status of {@code GET url}. Only the response's head is read, never its body: a server that sends its
     * status at once and then trickles a body answers as fast as one that sends it whole.
     *
     * @throws SocketTimeoutException when no head came within {@code timeout}
     * @throws InterruptedIOException when the thread was interrupted (its status is kept)
     * @throws IOException when the URL is not {@code http://}, the server cannot be reached or breaks HTTP/1.1
     */
    public static int status(String url, Duration timeout, String threadName) throws IOException {
        return exchange(url, "", null, timeout, threadName, (exchange, head) -> head.status());
    }

    private static <T> T exchange(
            String url, String extraHeaders, byte[] json, Duration timeout, String threadName, Reading<T> reading)
            throws IOException {
        String method = json == null ? "GET" : "POST";
        Http1Exchange.Target target;
        try {
            target = Http1Exchange.Target.of(url);
        } catch (IllegalArgumentException e) {
            throw new IOException("cannot " + method + " " + url + ": " + e.getMessage(), e);
        }
        int millis = (int) Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE);
        Http1Exchange exchange = Http1Exchange.unconnected();
        FutureTask<T> task = new FutureTask<>(() -> {
            exchange.connect(target, millis);
            if (json == null) {
                exchange.get(target, extraHeaders);
            } else {
                exchange.post(target, extraHeaders, "application/json", "application/json", json);
            }
            return reading.read(exchange, exchange.readHead());
        });
        Thread.ofVirtual().name(threadName).start(task);
        try {
            return task.get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while asking " + url);
        } catch (TimeoutException e) {
            throw new SocketTimeoutException(method + " " + url + " did not answer within " + millis + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(method + " " + url + " failed: " + e.getCause(), e.getCause());
        } finally {
            exchange.close();
        }
    }
}
