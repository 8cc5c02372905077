package dev.ctxprobe.embedded;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The OpenAI-compatible HTTP face of the embedded engine: {@code /health}, {@code /v1/models}, {@code
 * /v1/completions} (vLLM's JSON and SSE shapes) and llama-server's {@code /tokenize}. Answers 503 until an engine is
 * attached.
 */
public final class OpenAiServer implements AutoCloseable {
    static final int DEFAULT_MAX_TOKENS = 16;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer http;
    private final ExecutorService executor;
    private final String modelId;
    private final int vocabSize;
    private volatile LlamaEngine engine;

    private OpenAiServer(HttpServer http, ExecutorService executor, String modelId, int vocabSize) {
        this.http = http;
        this.executor = executor;
        this.modelId = modelId;
        this.vocabSize = vocabSize;
    }

    /** Binds {@code host:port} (0 picks a free port) and starts answering, 503 until {@link #attach}. */
    public static OpenAiServer start(String host, int port, String modelId, int vocabSize) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(host, port), 1024);
        // The default executor is one thread; virtual threads let queued requests wait for the slot cheaply.
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        http.setExecutor(executor);
        OpenAiServer server = new OpenAiServer(http, executor, modelId, vocabSize);
        http.createContext("/health", server.guarded(server::health));
        http.createContext("/v1/models", server.guarded(server::models));
        http.createContext("/v1/completions", server.guarded(server::completions));
        http.createContext("/tokenize", server.guarded(server::tokenize));
        http.start();
        return server;
    }

    public int port() {
        return http.getAddress().getPort();
    }

    /** Starts serving requests with this engine. */
    public void attach(LlamaEngine loaded) {
        this.engine = loaded;
    }

    @Override
    public void close() {
        http.stop(0);
        executor.shutdownNow();
    }

    /** A request the client got wrong: answered with 400 and an OpenAI-style error. */
    static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;
        final String code;

        BadRequest(String message, String code) {
            super(message);
            this.code = code;
        }
    }

    private interface Handler {
        void handle(HttpExchange ex, LlamaEngine engine) throws IOException, BadRequest, InterruptedException;
    }

    private HttpHandler guarded(Handler handler) {
        return ex -> {
            // Not try-with-resources: the exchange must stay open for the error answer in the catch clause.
            try {
                LlamaEngine current = engine;
                if (current == null) {
                    send(ex, 503, error("Loading model", "unavailable_error", null));
                    return;
                }
                handler.handle(ex, current);
            } catch (BadRequest e) {
                send(ex, 400, error(e.getMessage(), "invalid_request_error", e.code));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                ex.close();
            }
        };
    }

    private void health(HttpExchange ex, LlamaEngine engine) throws IOException {
        ObjectNode ok = JSON.createObjectNode().put("status", "ok");
        send(ex, 200, ok);
    }

    private void models(HttpExchange ex, LlamaEngine engine) throws IOException, BadRequest {
        requireMethod(ex, "GET");
        ObjectNode list = JSON.createObjectNode().put("object", "list");
        list.putArray("data")
                .addObject()
                .put("id", modelId)
                .put("object", "model")
                .put("owned_by", "ctxprobe")
                .put("max_model_len", engine.contextSize());
        send(ex, 200, list);
    }

    private void tokenize(HttpExchange ex, LlamaEngine engine) throws IOException, BadRequest {
        requireMethod(ex, "POST");
        JsonNode body = readBody(ex);
        JsonNode content = body.get("content");
        if (content == null || !content.isString()) {
            throw new BadRequest("'content' must be a string", null);
        }
        ObjectNode out = JSON.createObjectNode();
        ArrayNode tokens = out.putArray("tokens");
        for (int id : engine.tokenize(content.asString())) {
            tokens.add(id);
        }
        send(ex, 200, out);
    }

    private void completions(HttpExchange ex, LlamaEngine engine) throws IOException, BadRequest, InterruptedException {
        requireMethod(ex, "POST");
        JsonNode body = readBody(ex);
        int[] ids = promptIds(body.get("prompt"), engine);
        int maxTokens = intField(body, "max_tokens", DEFAULT_MAX_TOKENS);
        if (maxTokens < 1) {
            throw new BadRequest("max_tokens must be at least 1, got " + maxTokens, null);
        }
        int nCtx = engine.contextSize();
        if (ids.length >= nCtx) {
            throw new BadRequest(
                    "prompt of " + ids.length + " tokens exceeds the context of " + nCtx + " tokens",
                    "context_length_exceeded");
        }
        if ((long) ids.length + maxTokens > nCtx) {
            throw new BadRequest(
                    "prompt of " + ids.length + " tokens plus max_tokens " + maxTokens + " exceeds the context of "
                            + nCtx + " tokens",
                    "context_length_exceeded");
        }
        double temperature = body.path("temperature").asDouble(1.0);
        long seed = body.path("seed").asLong(ThreadLocalRandom.current().nextInt());
        boolean stream = body.path("stream").asBoolean(false);
        boolean includeUsage = body.path("stream_options").path("include_usage").asBoolean(false);
        String id =
                "cmpl-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        long created = System.currentTimeMillis() / 1000;
        if (stream) {
            streamCompletion(ex, engine, ids, maxTokens, (float) temperature, seed, includeUsage, id, created);
        } else {
            StringBuilder text = new StringBuilder();
            LlamaEngine.Completion done = engine.complete(ids, maxTokens, (float) temperature, seed, text::append);
            ObjectNode out = chunk(id, created);
            choice(out.putArray("choices"), text.toString(), done.finishReason());
            usage(out, done);
            send(ex, 200, out);
        }
    }

    private void streamCompletion(
            HttpExchange ex,
            LlamaEngine engine,
            int[] ids,
            int maxTokens,
            float temperature,
            long seed,
            boolean includeUsage,
            String id,
            long created)
            throws IOException, InterruptedException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.sendResponseHeaders(200, 0);
        OutputStream body = ex.getResponseBody();
        // Headers go out before the prefill, as vLLM does, so a client can tell "accepted" from "first token".
        body.flush();
        int[] sent = {0};
        LlamaEngine.Completion done;
        try {
            done = engine.complete(ids, maxTokens, temperature, seed, text -> {
                sent[0]++;
                ObjectNode event = chunk(id, created);
                // vLLM puts the finish reason on the last token's event; the count is known, so no lookahead delays a
                // token.
                choice(event.putArray("choices"), text, sent[0] == maxTokens ? "length" : null);
                event(body, event.toString());
            });
        } catch (RuntimeException e) {
            // Headers are gone already: report in the stream, as vLLM and SGLang do.
            event(
                    body,
                    error(String.valueOf(e.getMessage()), "internal_error", null)
                            .toString());
            event(body, "[DONE]");
            return;
        }
        if (done.completionTokens() < maxTokens) {
            ObjectNode last = chunk(id, created);
            choice(last.putArray("choices"), "", done.finishReason());
            event(body, last.toString());
        }
        if (includeUsage) {
            ObjectNode usage = chunk(id, created);
            usage.putArray("choices");
            usage(usage, done);
            event(body, usage.toString());
        }
        event(body, "[DONE]");
    }

    private static void event(OutputStream body, String data) throws IOException {
        body.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        body.flush();
    }

    private ObjectNode chunk(String id, long created) {
        return JSON.createObjectNode()
                .put("id", id)
                .put("object", "text_completion")
                .put("created", created)
                .put("model", modelId);
    }

    private static void choice(ArrayNode choices, String text, String finishReason) {
        ObjectNode c = choices.addObject().put("index", 0).put("text", text);
        c.putNull("logprobs");
        c.put("finish_reason", finishReason);
        c.putNull("stop_reason");
    }

    private static void usage(ObjectNode out, LlamaEngine.Completion done) {
        out.putObject("usage")
                .put("prompt_tokens", done.promptTokens())
                .put("total_tokens", done.promptTokens() + done.completionTokens())
                .put("completion_tokens", done.completionTokens());
    }

    private int[] promptIds(JsonNode prompt, LlamaEngine engine) throws BadRequest {
        if (prompt == null || prompt.isNull()) {
            throw new BadRequest("'prompt' is required", null);
        }
        // OpenAI allows a batch of one: ["text"] or [[ids]].
        if (prompt.isArray()
                && prompt.size() == 1
                && (prompt.get(0).isString() || prompt.get(0).isArray())) {
            prompt = prompt.get(0);
        }
        int[] ids;
        if (prompt.isString()) {
            ids = engine.tokenize(prompt.asString());
        } else if (prompt.isArray()) {
            ids = new int[prompt.size()];
            for (int i = 0; i < ids.length; i++) {
                JsonNode t = prompt.get(i);
                if (!t.isIntegralNumber() || t.asLong() < 0 || t.asLong() >= vocabSize) {
                    throw new BadRequest(
                            "token id " + t + " at position " + i + " is out of vocabulary [0, " + vocabSize + ")",
                            null);
                }
                ids[i] = t.asInt();
            }
        } else {
            throw new BadRequest("'prompt' must be a string or a list of token ids", null);
        }
        if (ids.length == 0) {
            throw new BadRequest("'prompt' is empty", null);
        }
        return ids;
    }

    private static int intField(JsonNode body, String name, int fallback) throws BadRequest {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw new BadRequest("'" + name + "' must be an integer, got " + n, null);
        }
        return n.asInt();
    }

    private static JsonNode readBody(HttpExchange ex) throws IOException, BadRequest {
        try {
            JsonNode body = JSON.readTree(ex.getRequestBody());
            if (body == null || !body.isObject()) {
                throw new BadRequest("the request body must be a JSON object", null);
            }
            return body;
        } catch (JacksonException e) {
            throw new BadRequest("invalid JSON body: " + e.getOriginalMessage(), null);
        }
    }

    private static void requireMethod(HttpExchange ex, String method) throws BadRequest {
        if (!ex.getRequestMethod().equalsIgnoreCase(method)) {
            throw new BadRequest(ex.getRequestMethod() + " not allowed here, use " + method, null);
        }
    }

    private static ObjectNode error(String message, String type, String code) {
        ObjectNode root = JSON.createObjectNode();
        root.putObject("error").put("message", message).put("type", type).put("code", code);
        return root;
    }

    private static void send(HttpExchange ex, int status, JsonNode body) throws IOException {
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
    }
}
