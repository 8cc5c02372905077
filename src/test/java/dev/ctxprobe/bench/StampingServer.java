package dev.ctxprobe.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ctxprobe.client.TokenRange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A loopback streaming completions server, on its own platform threads, that stamps {@link System#nanoTime()}
 * (CLOCK_MONOTONIC on Linux, the clock every client process here reads too) just before it writes each event's
 * first byte. Requests are told apart by the key {@code TokenPrompts} spells in a prompt's first three ids (the
 * request index for measured requests). Run in its own process by {@link #main}, so that no client under
 * measurement shares its JVM, its heap or its carrier threads.
 */
final class StampingServer implements AutoCloseable {

    static {
        // Real engines' servers (uvicorn, llama.cpp) set TCP_NODELAY; without it Nagle's algorithm holds a small
        // event back until the previous one is acknowledged (up to the peer's 40 ms delayed ACK), which is the
        // server's delay, not the client's. Read once, when the JDK server's configuration is first loaded.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        // 1000 streams: keep every connection, where the JDK server's defaults close idle ones above 200.
        System.setProperty("sun.net.httpserver.maxIdleConnections", "4096");
        System.setProperty("sun.net.httpserver.idleInterval", "600");
    }

    private static final byte[] PROMPT_KEY = "\"prompt\":".getBytes(StandardCharsets.US_ASCII);

    private final HttpServer server;
    // Platform threads: on virtual threads the server's writes would queue on the same few carrier threads as
    // the client's reads and the server's own delay would be counted as the client's.
    private final ExecutorService threads = Executors.newThreadPerTaskExecutor(
            Thread.ofPlatform().name("stamping-server-", 0).daemon(true).factory());
    private final TokenRange range;
    private final int events;
    private final long prefillNanos;
    private final long gapNanos;
    private final Map<Long, long[]> stamps = new ConcurrentHashMap<>();
    /** Streams finished since the last {@link #clear()}: a client can see [DONE] before its stamps are kept. */
    private final int[] served = {0};

    /**
     * @param events choice-bearing events per request
     * @param prefillMs between the response headers and the first event, so that they arrive in separate reads
     * @param gapMs between two events
     */
    StampingServer(TokenRange range, int events, double prefillMs, double gapMs) throws IOException {
        this.range = range;
        this.events = events;
        this.prefillNanos = (long) (prefillMs * 1e6);
        this.gapNanos = (long) (gapMs * 1e6);
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4096);
        server.setExecutor(threads);
        server.createContext("/v1/completions", this::complete);
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The write stamps of each event of the request with this key, or null if it never arrived. */
    long[] stamps(long key) {
        return stamps.get(key);
    }

    void clear() {
        synchronized (served) {
            stamps.clear();
            served[0] = 0;
        }
    }

    /** Waits, up to 30 s, until {@code count} streams have finished since the last clear. */
    private void awaitServed(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        synchronized (served) {
            long left;
            while (served[0] < count && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(served, left);
            }
        }
    }

    private void complete(HttpExchange exchange) throws IOException {
        try (exchange) {
            long key = readKeyAndDiscard(exchange.getRequestBody());
            long[] written = new long[events];
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            pause(prefillNanos);
            for (int i = 0; i < events; i++) {
                if (i > 0) {
                    pause(gapNanos);
                }
                byte[] event = event(i == events - 1);
                written[i] = System.nanoTime();
                out.write(event);
                out.flush();
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            stamps.put(key, written);
            synchronized (served) {
                served[0]++;
                served.notifyAll();
            }
        }
    }

    private byte[] event(boolean last) {
        String finish = last ? "\"length\"" : "null";
        String usage = last ? ",\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":" + events + "}" : "";
        return ("data: {\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":" + finish + "}]" + usage + "}\n\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** Reads the request key from the prompt's first three ids and throws the rest of the body away. */
    private long readKeyAndDiscard(InputStream body) throws IOException {
        byte[] buf = new byte[64 * 1024];
        int n = body.readNBytes(buf, 0, 256);
        long key = parseKey(buf, n);
        while (body.read(buf) >= 0) {
            // discarded: only the arrival of the whole body matters
        }
        return key;
    }

    private long parseKey(byte[] head, int n) {
        int pos = indexOf(head, n, PROMPT_KEY);
        if (pos < 0) {
            throw new IllegalStateException("request body has no prompt array in its first " + n + " bytes");
        }
        pos += PROMPT_KEY.length;
        long key = 0;
        long scale = 1;
        for (int id = 0; id < 3 && pos < n; id++) {
            // Python's json.dumps writes ", " and ": " where Java writes "," and ":".
            while (pos < n && (head[pos] < '0' || head[pos] > '9')) {
                pos++;
            }
            int value = 0;
            while (pos < n && head[pos] >= '0' && head[pos] <= '9') {
                value = value * 10 + (head[pos++] - '0');
            }
            key += (value - range.lo()) * scale;
            scale *= range.span();
        }
        return key;
    }

    private static int indexOf(byte[] data, int n, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= n; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (data[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void pause(long nanos) {
        if (nanos > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(nanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while streaming", e);
            }
        }
    }

    /**
     * The server as its own process: {@code StampingServer EVENTS PREFILL_MS GAP_MS}. Prints its base URL, then for
     * each line {@code take N} on stdin waits for N streams to have finished, then prints {@code key stamp0 stamp1 ...}
     * per request served since the last take, and {@code end}.
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        try (StampingServer server = new StampingServer(
                TokenRange.DEFAULT,
                Integer.parseInt(args[0]),
                Double.parseDouble(args[1]),
                Double.parseDouble(args[2]))) {
            System.out.println(server.baseUrl());
            System.out.flush();
            var commands = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            String command;
            while ((command = commands.readLine()) != null && command.startsWith("take ")) {
                server.awaitServed(Integer.parseInt(command.substring(5).strip()));
                StringBuilder out = new StringBuilder();
                for (var entry : server.stamps.entrySet()) {
                    out.append(entry.getKey());
                    for (long stamp : entry.getValue()) {
                        out.append(' ').append(stamp);
                    }
                    out.append('\n');
                }
                server.clear();
                System.out.print(out.append("end\n"));
                System.out.flush();
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
