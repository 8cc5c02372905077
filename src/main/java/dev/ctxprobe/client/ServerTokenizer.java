package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A running server's own tokenizer, asked over its {@code POST /tokenize}: the ids of a pass-key prompt are the ones
 * the served model reads, so the prompt is exactly {@code target} tokens (docs/search.md#the-frontier-of-right-answers).
 */
public final class ServerTokenizer {

    /** How an engine's {@code /tokenize} is asked. */
    public enum Api {
        /** vLLM and SGLang: {@code {"model", "prompt", "add_special_tokens"}}. */
        PROMPT,
        /** llama.cpp's server and the embedded engine: {@code {"content", "add_special"}}. */
        CONTENT
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long MAX_BYTES = 16L << 20;
    /** The most calls {@link #ids(List)} has in flight at once. */
    static final int IN_FLIGHT = 8;

    private final String url;
    private final String model;
    private final String authorization;
    private final Api api;
    private final Duration timeout;

    /**
     * @param baseUrl the server root
     * @param model the served model's name (vLLM answers only to it)
     * @param apiKey sent as a bearer token when not null
     */
    public ServerTokenizer(String baseUrl, String model, String apiKey, Api api, Duration timeout) {
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.url = base + "/tokenize";
        this.model = model;
        this.authorization = apiKey == null ? null : "Bearer " + apiKey;
        this.api = api;
        this.timeout = timeout;
    }

    /**
     * Warms the client's paths once per process ({@link WarmUp}), its requests' and this tokenizer's, so that a
     * step's check is timed without them.
     */
    public static void warmUp() {
        WarmUp.onceWithTokenizer();
    }

    /**
     * The ids of {@code text}; with {@code special}, as a prompt's start (the model's BOS token where it adds one).
     *
     * @throws IOException naming the server's answer when it does not tokenize
     */
    public int[] ids(String text, boolean special) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        if (api == Api.PROMPT) {
            body.put("model", model).put("prompt", text).put("add_special_tokens", special);
        } else {
            body.put("content", text).put("add_special", special);
        }
        PlainGet.Answer answer = PlainGet.postJson(
                url, authorization, JSON.writeValueAsBytes(body), timeout, MAX_BYTES, "ctxprobe-tokenize");
        if (answer.status() != 200 || answer.body() == null) {
            throw new IOException("POST " + url + " answered " + answer.status()
                    + (answer.body() == null ? "" : ": " + head(answer.body())));
        }
        try {
            JsonNode tokens = JSON.readTree(answer.body().getBytes(StandardCharsets.UTF_8))
                    .path("tokens");
            if (!tokens.isArray()) {
                throw new IOException("POST " + url + " sent no 'tokens' list: " + head(answer.body()));
            }
            int[] ids = new int[tokens.size()];
            for (int i = 0; i < ids.length; i++) {
                // llama.cpp sends {"id", "piece"} objects when asked for pieces; plain ids otherwise.
                JsonNode t = tokens.get(i).isObject() ? tokens.get(i).path("id") : tokens.get(i);
                if (!t.canConvertToInt()) {
                    throw new IOException("POST " + url + " sent a token that is not an id: " + t);
                }
                ids[i] = t.asInt();
            }
            return ids;
        } catch (JacksonException e) {
            throw new IOException("POST " + url + " sent no JSON: " + head(answer.body()), e);
        }
    }

    /** One text to tokenize; with {@code special}, as a prompt's start. */
    public record Text(String text, boolean special) {}

    /**
     * The ids of each of {@code texts}, asked at once: each call waits mostly on the server, so several in flight
     * cost about the time of the slowest (docs/search.md#the-frontier-of-right-answers). At most {@link #IN_FLIGHT}
     * go at a time, so that a step of many prompts does not flood the server it is about to measure.
     *
     * @throws IOException the first call's failure, naming the server's answer
     * @throws InterruptedIOException when the thread was interrupted (its status is kept)
     */
    public List<int[]> ids(List<Text> texts) throws IOException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        List<Future<int[]>> answers = new ArrayList<>();
        try (ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Text t : texts) {
                answers.add(calls.submit(() -> {
                    slots.acquire();
                    try {
                        return ids(t.text(), t.special());
                    } finally {
                        slots.release();
                    }
                }));
            }
            List<int[]> out = new ArrayList<>();
            for (Future<int[]> a : answers) {
                out.add(a.get());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while asking " + url);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("POST " + url + " failed: " + e.getCause(), e.getCause());
        }
    }

    private static String head(String body) {
        return body.length() <= 200 ? body : body.substring(0, 200) + "...";
    }
}
