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
import java.util.function.Predicate;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The OpenAI-compatible HTTP face of the embedded engine: {@code /health}, {@code /v1/models}, {@code
 * /v1/completions} (vLLM's JSON and SSE shapes), {@code /tokenize} (vLLM's {@code prompt} or llama-server's {@code
 * content}), and llama-server's {@code /props} and {@code /slots}, which state the slots. Answers 503 until an engine is attached. Every error, whatever its status, has the shape of vLLM's
 * current OpenAI server, {@code {"error": {"message", "type", "param", "code"}}} with the HTTP status as {@code
 * code}, so a client written against vLLM reads it the same way.
 */
public final class OpenAiServer implements AutoCloseable {
    static final int DEFAULT_MAX_TOKENS = 16;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpServer http;
    private final ExecutorService executor;
    private final String modelId;
    private final ModelShape shape;
    private final int vocabSize;
    private final long startedAt = System.currentTimeMillis() / 1000;
    private volatile LlamaEngine engine;

    private OpenAiServer(HttpServer http, ExecutorService executor, String modelId, ModelShape shape) {
        this.http = http;
        this.executor = executor;
        this.modelId = modelId;
        this.shape = shape;
        this.vocabSize = shape.vocabSize();
    }

    /**
     * Binds {@code host:port} (0 picks a free port) and starts answering, 503 until {@link #attach}.
     *
     * @param shape the model served: its vocabulary and training context are stated in {@code GET /v1/models}
     */
    public static OpenAiServer start(String host, int port, String modelId, ModelShape shape) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(host, port), 1024);
        // The default executor is one thread. Platform threads, not virtual ones: a completion waits for its tokens
        // inside llama.cpp's native code, which pins a virtual thread to its carrier, and with as many carriers as
        // cores the slots of --parallel would decode only as many requests together as there are cores.
        ExecutorService executor = Executors.newCachedThreadPool(
                Thread.ofPlatform().daemon().name("ctxprobe-serve-http-", 0).factory());
        http.setExecutor(executor);
        OpenAiServer server = new OpenAiServer(http, executor, modelId, shape);
        // Contexts match by prefix: each route checks its exact path, and any other path is a JSON 404.
        http.createContext("/", server.guarded(Route.NONE, (ex, engine) -> {
            throw notFound(ex);
        }));
        http.createContext("/health", server.guarded(Route.exact("/health", "GET"), server::health));
        http.createContext(
                "/v1/models",
                server.guarded(
                        new Route(p -> p.equals("/v1/models") || p.startsWith("/v1/models/"), "GET"), server::models));
        http.createContext(
                "/v1/completions", server.guarded(Route.exact("/v1/completions", "POST"), server::completions));
        http.createContext("/tokenize", server.guarded(Route.exact("/tokenize", "POST"), server::tokenize));
        http.createContext("/props", server.guarded(Route.exact("/props", "GET"), server::props));
        http.createContext("/slots", server.guarded(Route.exact("/slots", "GET"), server::slots));
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

    /** A request answered with an error: its HTTP status, vLLM's error type and the parameter at fault. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final int status;
        final String type;
        final String param;

        Refused(int status, String type, String message, String param) {
            super(message);
            this.status = status;
            this.type = type;
            this.param = param;
        }
    }

    private static Refused badRequest(String message, String param) {
        return new Refused(400, "BadRequestError", message, param);
    }

    private static Refused notFound(HttpExchange ex) {
        return new Refused(
                404,
                "NotFoundError",
                "Not Found: " + ex.getRequestURI().getPath() + " (this server answers GET /health, GET /v1/models,"
                        + " POST /v1/completions, POST /tokenize, GET /props and GET /slots)",
                null);
    }

    private static Refused modelNotFound(String name) {
        return new Refused(404, "NotFoundError", "The model `" + name + "` does not exist.", "model");
    }

    /** The paths and the method a handler answers: another path under its prefix is a 404, another method a 405. */
    private record Route(Predicate<String> path, String method) {
        static final Route NONE = new Route(p -> false, "GET");

        static Route exact(String path, String method) {
            return new Route(path::equals, method);
        }
    }

    private interface Handler {
        void handle(HttpExchange ex, LlamaEngine engine) throws IOException, Refused, InterruptedException;
    }

    private HttpHandler guarded(Route route, Handler handler) {
        return ex -> {
            // Not try-with-resources: the exchange must stay open for the error answer in the catch clause.
            try {
                if (!route.path().test(ex.getRequestURI().getPath())) {
                    throw notFound(ex);
                }
                if (!ex.getRequestMethod().equalsIgnoreCase(route.method())) {
                    ex.getResponseHeaders().set("Allow", route.method());
                    throw new Refused(
                            405,
                            "MethodNotAllowedError",
                            "Method Not Allowed: " + ex.getRequestMethod() + " "
                                    + ex.getRequestURI().getPath() + "; use " + route.method(),
                            null);
                }
                LlamaEngine current = engine;
                if (current == null) {
                    throw new Refused(503, "ServiceUnavailableError", "Loading model", null);
                }
                handler.handle(ex, current);
            } catch (Refused e) {
                send(ex, e.status, error(e.getMessage(), e.type, e.param, e.status));
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

    private void models(HttpExchange ex, LlamaEngine engine) throws IOException, Refused {
        String path = ex.getRequestURI().getPath();
        if (path.startsWith("/v1/models/")) {
            String id = path.substring("/v1/models/".length());
            if (!id.equals(modelId)) {
                throw modelNotFound(id);
            }
            send(ex, 200, modelCard(engine));
            return;
        }
        ObjectNode list = JSON.createObjectNode().put("object", "list");
        list.putArray("data").add(modelCard(engine));
        send(ex, 200, list);
    }

    /**
     * vLLM's model card (OpenAI's id, object, created and owned_by, and vLLM's root, parent and max_model_len) with
     * llama-server's {@code meta}: the vocabulary ({@code n_vocab}, what token-id prompts must stay inside), the
     * context ({@code n_ctx}, which the slots share out) and the model's training context ({@code n_ctx_train}), so
     * that a client reads either server's facts here (docs/engines.md, embedded). {@code max_model_len} is what one
     * request may fill: a slot's context.
     */
    private ObjectNode modelCard(LlamaEngine engine) {
        ObjectNode m = JSON.createObjectNode()
                .put("id", modelId)
                .put("object", "model")
                .put("created", startedAt)
                .put("owned_by", "ctxprobe")
                .put("root", modelId);
        m.putNull("parent");
        m.put("max_model_len", engine.contextSize());
        m.putObject("meta")
                .put("n_vocab", vocabSize)
                .put("n_ctx", engine.totalContext())
                .put("n_ctx_train", shape.contextLength())
                .put("n_embd", shape.embeddingLength());
        return m;
    }

    /**
     * llama-server's {@code GET /props}, the part that states the limits: each slot's context ({@code
     * default_generation_settings.n_ctx}) and how many slots there are ({@code total_slots}).
     */
    private void props(HttpExchange ex, LlamaEngine engine) throws IOException {
        ObjectNode out = JSON.createObjectNode();
        out.putObject("default_generation_settings").put("n_ctx", engine.contextSize());
        out.put("total_slots", engine.slots()).put("model_alias", modelId);
        send(ex, 200, out);
    }

    /** llama-server's {@code GET /slots}: each slot's id, context and whether it runs a completion now. */
    private void slots(HttpExchange ex, LlamaEngine engine) throws IOException {
        ArrayNode out = JSON.createArrayNode();
        for (int id = 0; id < engine.slots(); id++) {
            out.addObject()
                    .put("id", id)
                    .put("n_ctx", engine.contextSize())
                    .put("is_processing", engine.isProcessing(id));
        }
        send(ex, 200, out);
    }

    /**
     * vLLM's {@code prompt} (answered in vLLM's shape, with {@code count} and {@code max_model_len}) or llama-server's
     * {@code content} (answered in its shape). No BOS either way: this engine adds none to a text prompt, so the count
     * is the {@code prompt_tokens} a completion of the same text reports.
     */
    private void tokenize(HttpExchange ex, LlamaEngine engine) throws IOException, Refused {
        JsonNode body = readBody(ex);
        checkModel(body);
        boolean vllm = body.has("prompt");
        String name = vllm ? "prompt" : "content";
        JsonNode text = body.get(name);
        if (text == null || !text.isString()) {
            throw badRequest("'" + name + "' must be a string, e.g. {\"prompt\": \"some text\"}", name);
        }
        int[] ids = engine.tokenize(text.asString());
        ObjectNode out = JSON.createObjectNode();
        if (vllm) {
            out.put("count", ids.length).put("max_model_len", engine.contextSize());
        }
        ArrayNode tokens = out.putArray("tokens");
        for (int id : ids) {
            tokens.add(id);
        }
        if (vllm) {
            out.putNull("token_strs");
        }
        send(ex, 200, out);
    }

    // vLLM answers only to the name it serves; a request that names no model gets that one.
    private void checkModel(JsonNode body) throws Refused {
        JsonNode model = body.get("model");
        if (model != null
                && !model.isNull()
                && !(model.isString() && model.asString().equals(modelId))) {
            throw modelNotFound(model.isString() ? model.asString() : model.toString());
        }
    }

    private void completions(HttpExchange ex, LlamaEngine engine) throws IOException, Refused, InterruptedException {
        JsonNode body = readBody(ex);
        checkModel(body);
        int n = intField(body, "n", 1);
        if (n != 1) {
            throw badRequest(
                    "n must be 1: this server runs one completion per request; send " + n + " requests instead", "n");
        }
        refuseUnserved(body);
        int[] ids = promptIds(body.get("prompt"), engine);
        int maxTokens = intField(body, "max_tokens", DEFAULT_MAX_TOKENS);
        if (maxTokens < 1) {
            throw badRequest("max_tokens must be at least 1, got " + maxTokens, "max_tokens");
        }
        int nCtx = engine.contextSize();
        long requested = (long) ids.length + maxTokens;
        if (requested > nCtx) {
            // The prompt and every token to generate must fit: with max_tokens m the longest prompt is n_ctx - m.
            // With several slots the limit is a slot's share of n_ctx, named as llama-server names it (n_ctx_slot).
            String slots = engine.slots() == 1
                    ? ""
                    : " Each of the " + engine.slots() + " slots holds n_ctx_slot = " + nCtx + " of the "
                            + engine.totalContext() + " tokens of n_ctx (--parallel splits the context).";
            throw badRequest(
                    "This model's maximum context length is " + nCtx + " tokens. However, you requested " + requested
                            + " tokens (" + ids.length + " in the prompt, " + maxTokens + " in the completion): with"
                            + " max_tokens " + maxTokens + " a prompt can have at most " + Math.max(0, nCtx - maxTokens)
                            + " tokens." + slots,
                    ids.length >= nCtx ? "prompt" : "max_tokens");
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
                    error("the engine failed: " + e.getMessage(), "InternalServerError", null, 500)
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

    /**
     * Fields vLLM serves that change the answer and this server does not: a 400 naming the field, never an answer
     * that silently lacks what was asked for (docs/engines.md, embedded). Left out, null or false, they pass.
     */
    private static void refuseUnserved(JsonNode body) throws Refused {
        for (String field : new String[] {"logprobs", "prompt_logprobs"}) {
            JsonNode v = body.get(field);
            if (v != null && !v.isNull()) {
                throw badRequest(
                        "'" + field + "' is not served here: this server returns no log-probabilities; leave it out",
                        field);
            }
        }
        JsonNode echo = body.get("echo");
        if (echo != null && !echo.isNull() && !(echo.isBoolean() && !echo.asBoolean())) {
            throw badRequest("'echo' is not served here: the answer never repeats the prompt; leave it out", "echo");
        }
    }

    private int[] promptIds(JsonNode prompt, LlamaEngine engine) throws Refused {
        if (prompt == null || prompt.isNull()) {
            throw badRequest("'prompt' is required: a string or a list of token ids", "prompt");
        }
        if (prompt.isArray()
                && !prompt.isEmpty()
                && (prompt.get(0).isString() || prompt.get(0).isArray())) {
            // OpenAI's batch, ["text", ...] or [[ids], ...]: one prompt is served, more would need a choice each.
            if (prompt.size() > 1) {
                throw badRequest(
                        "a batch of " + prompt.size() + " prompts is not served here: send one prompt per request",
                        "prompt");
            }
            prompt = prompt.get(0);
        }
        int[] ids;
        if (prompt.isString()) {
            ids = engine.tokenize(prompt.asString());
        } else if (prompt.isArray()) {
            ids = new int[prompt.size()];
            for (int i = 0; i < ids.length; i++) {
                JsonNode t = prompt.get(i);
                if (!t.isIntegralNumber()) {
                    throw badRequest(
                            "'prompt' is a list of token ids, but position " + i + " holds " + t
                                    + ": give one string or one list of whole numbers",
                            "prompt");
                }
                if (t.asLong() < 0 || t.asLong() >= vocabSize) {
                    throw badRequest(
                            "token id " + t + " at position " + i + " is out of vocabulary [0, " + vocabSize
                                    + ") (GET /v1/models states it as meta.n_vocab)",
                            "prompt");
                }
                ids[i] = t.asInt();
            }
        } else {
            throw badRequest("'prompt' must be a string or a list of token ids", "prompt");
        }
        if (ids.length == 0) {
            throw badRequest("'prompt' is empty: give at least one token", "prompt");
        }
        return ids;
    }

    private static int intField(JsonNode body, String name, int fallback) throws Refused {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw badRequest("'" + name + "' must be a whole number, got " + n, name);
        }
        return n.asInt();
    }

    private static JsonNode readBody(HttpExchange ex) throws IOException, Refused {
        try {
            JsonNode body = JSON.readTree(ex.getRequestBody());
            if (body == null || !body.isObject()) {
                throw badRequest("the request body must be a JSON object", null);
            }
            return body;
        } catch (JacksonException e) {
            throw badRequest("invalid JSON body: " + e.getOriginalMessage(), null);
        }
    }

    private static ObjectNode error(String message, String type, String param, int status) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode error = root.putObject("error").put("message", message).put("type", type);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        error.put("code", status);
        return root;
    }

    private static void send(HttpExchange ex, int status, JsonNode body) throws IOException {
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
    }
}
