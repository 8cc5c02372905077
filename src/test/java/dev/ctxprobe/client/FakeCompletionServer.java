package dev.ctxprobe.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A loopback OpenAI completions server that streams like vLLM and misbehaves on request: delays,
 * error events, non-200 answers, hangs, garbage, and connections closed mid-stream.
 */
final class FakeCompletionServer implements AutoCloseable {

    enum Mode {
        STREAM,
        ERROR_EVENT,
        HANG_AFTER_HEADERS,
        GARBAGE_LINES,
        INVALID_JSON,
        CLOSE_MID_STREAM,
        NO_CHOICES,
        NO_USAGE,
        JSON_BODY
    }

    /**
     * How to answer every request.
     *
     * @param status the HTTP status; a non-200 status answers {@code body} as plain text
     * @param delayMs before the response headers (the prefill)
     * @param tokens choice-bearing events to stream
     * @param gapMs between two choice-bearing events
     * @param mode the behaviour
     * @param body the non-200 body
     */
    record Script(int status, long delayMs, int tokens, long gapMs, Mode mode, String body) {
        static Script stream(long delayMs, int tokens, long gapMs) {
            return new Script(200, delayMs, tokens, gapMs, Mode.STREAM, "");
        }

        static Script mode(Mode mode) {
            return new Script(200, 0, 3, 0, mode, "");
        }

        static Script status(int status, String body) {
            return new Script(status, 0, 0, 0, Mode.STREAM, body);
        }
    }

    /** What one request carried, as the server parsed it. */
    record Received(int promptLen, List<Integer> firstIds, int minId, int maxId, boolean stream, int maxTokens) {}

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private volatile Script script = Script.stream(0, 1, 0);
    private volatile String modelsBody =
            "{\"object\":\"list\",\"data\":[{\"id\":\"served-model\",\"object\":\"model\"}]}";

    FakeCompletionServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext("/v1/completions", this::complete);
        server.createContext("/v1/models", this::models);
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    FakeCompletionServer script(Script script) {
        this.script = script;
        return this;
    }

    FakeCompletionServer modelsBody(String body) {
        this.modelsBody = body;
        return this;
    }

    int maxInFlight() {
        return maxInFlight.get();
    }

    int inFlight() {
        return inFlight.get();
    }

    List<Received> received() {
        return List.copyOf(received);
    }

    private void models(HttpExchange exchange) throws IOException {
        byte[] body = modelsBody.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(modelsBody.startsWith("{") ? 200 : 404, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private void complete(HttpExchange exchange) throws IOException {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        // A request leaves the count before the bytes that end it for the client: once it has them, the client may
        // send its next request, which this server could otherwise count beside the one still in its last write.
        AtomicBoolean counted = new AtomicBoolean(true);
        Runnable ending = () -> {
            if (counted.getAndSet(false)) {
                inFlight.decrementAndGet();
            }
        };
        boolean abort = false;
        try {
            Received request = parse(exchange.getRequestBody().readAllBytes());
            received.add(request);
            abort = !answer(exchange, script, request, ending);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ending.run();
            if (!abort) {
                exchange.close();
            }
        }
        if (abort) {
            // Leaving the exchange open and throwing makes the JDK server drop the connection
            // without the final chunk: what a client sees when an engine crashes mid-stream.
            throw new IOException("fake server drops the connection mid-stream");
        }
    }

    private static Received parse(byte[] body) {
        JsonNode json = JSON.readTree(body);
        JsonNode prompt = json.get("prompt");
        List<Integer> first = new ArrayList<>();
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        for (int i = 0; i < prompt.size(); i++) {
            int id = prompt.get(i).asInt();
            if (i < 3) {
                first.add(id);
            }
            min = Math.min(min, id);
            max = Math.max(max, id);
        }
        return new Received(
                prompt.size(),
                first,
                min,
                max,
                json.get("stream").asBoolean(),
                json.get("max_tokens").asInt());
    }

    /**
     * Answers per the script; false when the connection must be dropped instead of closed. A streamed answer runs
     * {@code ending} before its last event.
     */
    private static boolean answer(HttpExchange exchange, Script script, Received request, Runnable ending)
            throws IOException, InterruptedException {
        Thread.sleep(script.delayMs());
        if (script.status() != 200) {
            byte[] body = script.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(script.status(), body.length);
            exchange.getResponseBody().write(body);
            return true;
        }
        String usage = "{\"prompt_tokens\":" + request.promptLen() + ",\"completion_tokens\":" + script.tokens()
                + ",\"total_tokens\":" + (request.promptLen() + script.tokens()) + "}";
        if (script.mode() == Mode.JSON_BODY) {
            byte[] body = ("{\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":\"length\"}],"
                            + "\"usage\":" + usage + "}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            return true;
        }
        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        switch (script.mode()) {
            case HANG_AFTER_HEADERS -> {
                out.flush();
                Thread.sleep(60_000);
            }
            case ERROR_EVENT ->
                event(
                        out,
                        "{\"error\":{\"message\":\"The input (99 tokens) is longer than the model's context length\",\"code\":400}}");
            case GARBAGE_LINES -> line(out, "<html>this is no event stream</html>");
            case INVALID_JSON -> event(out, "{\"choices\":[{\"text\":");
            case NO_CHOICES -> {
                event(out, "{\"id\":\"cmpl-1\",\"choices\":[],\"usage\":" + usage + "}");
                event(out, "[DONE]");
            }
            case CLOSE_MID_STREAM -> {
                event(out, choice(null));
                return false;
            }
            default -> {
                for (int i = 0; i < script.tokens(); i++) {
                    if (i > 0) {
                        Thread.sleep(script.gapMs());
                    }
                    boolean last = i == script.tokens() - 1;
                    if (last) {
                        ending.run();
                    }
                    event(out, choice(last ? "\"length\"" : null));
                }
                if (script.mode() != Mode.NO_USAGE) {
                    event(out, "{\"id\":\"cmpl-1\",\"choices\":[],\"usage\":" + usage + "}");
                }
                event(out, "[DONE]");
            }
        }
        return true;
    }

    private static String choice(String finishReason) {
        return "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\","
                + "\"logprobs\":null,\"finish_reason\":" + finishReason + "}],\"usage\":null}";
    }

    private static void event(OutputStream out, String data) throws IOException {
        line(out, "data: " + data + "\n");
    }

    private static void line(OutputStream out, String text) throws IOException {
        out.write((text + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
