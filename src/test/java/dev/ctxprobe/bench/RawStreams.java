package dev.ctxprobe.bench;

import dev.ctxprobe.client.TokenPrompts;
import dev.ctxprobe.client.TokenRange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

/**
 * The floor under the client's timing error: the least a JVM client can do per stream (a blocking socket on a
 * virtual thread, no HTTP library, no JSON), stamping the read that brings each stream's first event. What the
 * real client adds above this floor is its own cost; the floor itself is the machine's scheduling.
 */
final class RawStreams {

    private RawStreams() {}

    /**
     * The floor as its own process: {@code RawStreams URL STREAMS REQUESTS TOKENS EVENTS}. Sends one throwaway
     * stream (keyed after the measured ones, so the code is not cold), then the requests, {@code STREAMS} at a time,
     * and prints {@code index first_event_nanos} for each.
     */
    public static void main(String[] args) throws Exception {
        int port = URI.create(args[0]).getPort();
        int streams = Integer.parseInt(args[1]);
        int requests = Integer.parseInt(args[2]);
        long tokens = Long.parseLong(args[3]);
        int events = Integer.parseInt(args[4]);
        stream(port, TokenPrompts.body("bench", tokens, events, TokenRange.DEFAULT, requests));
        long[] firsts = firsts(port, streams, requests, tokens, events);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < requests; i++) {
            out.append(i).append(' ').append(firsts[i]).append('\n');
        }
        System.out.print(out);
    }

    /** For each of {@code requests} requests, {@code streams} at a time, the arrival of its first event. */
    static long[] firsts(int port, int streams, int requests, long tokens, int events) throws InterruptedException {
        List<byte[]> bodies = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            bodies.add(TokenPrompts.body("bench", tokens, events, TokenRange.DEFAULT, i));
        }
        List<Future<Long>> firsts = new ArrayList<>();
        Semaphore slots = new Semaphore(streams);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (byte[] body : bodies) {
                firsts.add(threads.submit(() -> {
                    slots.acquire();
                    try {
                        return stream(port, body);
                    } finally {
                        slots.release();
                    }
                }));
            }
            long[] out = new long[requests];
            for (int i = 0; i < requests; i++) {
                out[i] = firsts.get(i).get();
            }
            return out;
        } catch (ExecutionException e) {
            throw new IllegalStateException("a raw stream failed", e.getCause());
        }
    }

    /** Sends one request and reads to the end; returns when the read that held the first event returned. */
    private static long stream(int port, byte[] body) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buf = new byte[8192];
            byte previous = 0;
            long first = -1;
            int n;
            // Each SSE event ends with an empty line; HTTP framing uses CRLF, so "\n\n" occurs only at an event's end.
            while ((n = in.read(buf)) > 0) {
                long now = System.nanoTime();
                for (int i = 0; i < n && first < 0; i++) {
                    if (buf[i] == '\n' && previous == '\n') {
                        first = now;
                    }
                    previous = buf[i];
                }
            }
            if (first < 0) {
                throw new IOException("the stream ended without an event");
            }
            return first;
        }
    }
}
