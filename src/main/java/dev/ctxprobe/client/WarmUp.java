package dev.ctxprobe.client;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import okio.BufferedSource;
import okio.Okio;

/**
 * Sends the client's first requests, once per process, to a loopback server of its own, before any request is
 * measured: connect, write, the response head, a chunked event stream, the events' JSON, on a virtual thread, as a
 * measured request runs. Measured in a fresh process without it, the JIT compiled this path while the first
 * measured streams waited on the same few cores, and their first events came late by far more than once the path was
 * compiled (BENCHMARKS.md, "Timing").
 */
final class WarmUp {

    /** Enough requests (about ten events each) for the JIT's top tier on the hot path. */
    static final int REQUESTS = 600;

    /** The most it may take on a loaded machine: it comes before a step's first request. */
    static final Duration BUDGET = Duration.ofSeconds(3);

    /**
     * Rounds of the pass-key prompt's {@code /tokenize} calls, as a step's first prompt asks them: its opening, filler,
     * cue and needle at once.
     */
    static final int TOKENIZE_ROUNDS = 150;

    private static final AtomicBoolean DONE = new AtomicBoolean();
    private static final AtomicBoolean TOKENIZER_DONE = new AtomicBoolean();

    private WarmUp() {}

    /** Warms the path the first time it is called in this process; returns at once after that. */
    static void once() {
        if (!DONE.compareAndSet(false, true)) {
            return;
        }
        warm(WarmUp::send);
    }

    /**
     * Warms the path of {@link ServerTokenizer} too, the first time it is called in this process: a run with a
     * pass-key check asks the server's {@code /tokenize} before its first step's requests, and measured in a fresh
     * process that path's first calls (connect, the JSON written and read, the calls' virtual threads) cost tens of
     * milliseconds of the client's own (docs/search.md#the-frontier-of-right-answers).
     */
    static void onceWithTokenizer() {
        once();
        if (!TOKENIZER_DONE.compareAndSet(false, true)) {
            return;
        }
        warm(WarmUp::tokenize);
    }

    /** What a warm-up client does against the loopback answerer on {@code port} until {@code until}. */
    private interface Calls {
        void run(int port, long until);
    }

    /** Runs {@code calls} against a loopback answerer within the budget, then waits for the compiler to settle. */
    private static void warm(Calls calls) {
        long until = System.nanoTime() + BUDGET.toNanos();
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread server =
                    Thread.ofPlatform().name("ctxprobe-warm-up").daemon(true).start(() -> answer(listener));
            Thread client = Thread.ofVirtual().start(() -> calls.run(listener.getLocalPort(), until));
            client.join();
            listener.close();
            server.join(1000);
        } catch (IOException e) {
            // No loopback socket: measured requests warm the path themselves, as they did before.
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        awaitQuietCompiler(until);
    }

    private static void tokenize(int port, long until) {
        List<ServerTokenizer.Text> texts = new ArrayList<>(PasskeyPrompt.Pieces.texts());
        texts.add(new ServerTokenizer.Text("\nThe pass key is 48213. Remember it.\n", false));
        for (int i = 0; i < TOKENIZE_ROUNDS && System.nanoTime() < until; i++) {
            // Both shapes of the question: vLLM's and llama.cpp's.
            ServerTokenizer.Api api = ServerTokenizer.Api.values()[i % ServerTokenizer.Api.values().length];
            ServerTokenizer t =
                    new ServerTokenizer("http://127.0.0.1:" + port, "warm-up", null, api, Duration.ofSeconds(2));
            try {
                t.ids(texts);
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void send(int port, long until) {
        byte[] body = TokenPrompts.body("warm-up", 64, 8, TokenRange.DEFAULT, 0);
        CompletionClient client = new CompletionClient(
                "http://127.0.0.1:" + port, Duration.ofSeconds(2), "warm-up", ReadLimits.forOutput(8), false);
        for (int i = 0; i < REQUESTS && System.nanoTime() < until; i++) {
            RequestRecord r = client.send(new CompletionRequest(i, true, 64, body));
            if (!r.ok()) {
                return;
            }
        }
    }

    /**
     * Answers each connection, one at a time, until the listener is closed: {@code POST /tokenize} with a list of
     * ids, anything else with the canned stream.
     */
    private static void answer(ServerSocket listener) {
        byte[][] response = response();
        byte[][] tokens = tokens();
        while (!listener.isClosed()) {
            try (Socket s = listener.accept()) {
                s.setTcpNoDelay(true);
                BufferedSource in = Okio.buffer(Okio.source(s.getInputStream()));
                long length = 0;
                String line = Http1Exchange.line(in, Http1Exchange.HEAD_BYTES, "the request");
                boolean tokenize = line.startsWith("POST /tokenize ");
                while (!(line = Http1Exchange.line(in, Http1Exchange.HEAD_BYTES, "the request")).isEmpty()) {
                    if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                        length = Long.parseLong(line.substring(15).strip());
                    }
                }
                in.skip(length);
                OutputStream out = s.getOutputStream();
                for (byte[] piece : tokenize ? tokens : response) {
                    out.write(piece);
                    out.flush();
                }
            } catch (IOException | RuntimeException e) {
                // The listener closed, or a warm-up request gave up: either way warming is over or moves on.
            }
        }
    }

    /** A 200 chunked event stream as vLLM sends one, head and events in separate writes: an event per chunk. */
    private static byte[][] response() {
        StringBuilder events = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            String usage = i == 7 ? ",\"usage\":{\"prompt_tokens\":64,\"completion_tokens\":8}" : "";
            String event = "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
                    + "\"text\":\" x\",\"logprobs\":null,\"finish_reason\":" + (i == 7 ? "\"length\"" : "null") + "}]"
                    + usage + "}\n\n";
            events.append(Integer.toHexString(event.length()))
                    .append("\r\n")
                    .append(event)
                    .append("\r\n");
        }
        String done = "data: [DONE]\n\n";
        events.append(Integer.toHexString(done.length()))
                .append("\r\n")
                .append(done)
                .append("\r\n0\r\n\r\n");
        String head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                + "transfer-encoding: chunked\r\n\r\n";
        return new byte[][] {ascii(head), ascii(events.toString())};
    }

    /** A {@code /tokenize} answer in llama.cpp's shape, as long as a needle's. */
    private static byte[][] tokens() {
        StringBuilder ids = new StringBuilder("{\"tokens\":[1");
        for (int i = 0; i < 40; i++) {
            ids.append(',').append(100 + i);
        }
        String body = ids.append("]}").toString();
        String head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: " + body.length()
                + "\r\nconnection: close\r\n\r\n";
        return new byte[][] {ascii(head), ascii(body)};
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Waits, up to {@code until}, for the JIT to go 100 ms without finishing a compilation: its backlog is ours. */
    private static void awaitQuietCompiler(long until) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long last = jit.getTotalCompilationTime();
        while (System.nanoTime() < until) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = jit.getTotalCompilationTime();
            if (now == last) {
                return;
            }
            last = now;
        }
    }
}
