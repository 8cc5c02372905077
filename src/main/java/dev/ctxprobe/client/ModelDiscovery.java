package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Asks a server which model it serves: vLLM rejects requests that name another one. Every ask is bounded as a whole
 * (connecting, the headers, the body) and reads at most {@link #MAX_BODY_BYTES}; a thread interrupt ends it at once.
 */
public final class ModelDiscovery {

    /** A model list is a few KiB; a body larger than this is not one. */
    static final int MAX_BODY_BYTES = 1 << 20;

    private static final Duration POLL = Duration.ofMillis(250);
    private static final Duration ASK_LIMIT = Duration.ofSeconds(10);

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ModelDiscovery() {}

    /**
     * The first {@code data[].id} of {@code GET /v1/models}.
     *
     * @throws IOException when the server cannot be reached, answers other than 200, or lists no model
     */
    public static String firstModelId(String baseUrl, Duration timeout) throws IOException {
        return firstModelId(baseUrl, timeout, null);
    }

    /**
     * As {@link #firstModelId(String, Duration)}, authenticating with {@code apiKey} when it is not null.
     *
     * @throws InterruptedIOException when the thread is interrupted; its interrupt status is kept
     */
    public static String firstModelId(String baseUrl, Duration timeout, String apiKey) throws IOException {
        PlainGet.Answer a = ask(baseUrl, timeout, apiKey);
        if (a.status() != 200) {
            throw new IOException("GET " + a.url() + " answered " + a.status() + ": " + head(a.body()));
        }
        return idOf(a);
    }

    /** Same as {@link #firstModelId(String, Duration)} with a 10 s timeout. */
    public static String firstModelId(String baseUrl) throws IOException {
        return firstModelId(baseUrl, Duration.ofSeconds(10));
    }

    /**
     * The served model's id, asked again every 250 ms while the server answers 503 (not ready yet): some servers'
     * health check says 200 before the model can serve. Null when the server has no model list (another status, no
     * answer within 10 s, not a list) or {@code within} runs out.
     *
     * @throws InterruptedException when the thread is interrupted
     */
    public static String awaitModelId(String baseUrl, String apiKey, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            try {
                PlainGet.Answer a =
                        ask(baseUrl, Duration.ofNanos(Math.max(1, Math.min(left, ASK_LIMIT.toNanos()))), apiKey);
                if (a.status() == 200) {
                    return idOf(a);
                }
                if (a.status() != 503) {
                    return null;
                }
            } catch (InterruptedIOException e) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("model discovery interrupted");
                }
                return null;
            } catch (IOException noList) {
                return null;
            }
            if (deadline - System.nanoTime() <= POLL.toNanos()) {
                return null;
            }
            Thread.sleep(POLL);
        }
    }

    private static PlainGet.Answer ask(String baseUrl, Duration timeout, String apiKey) throws IOException {
        String url = CompletionClient.endpoint(baseUrl, "models");
        PlainGet.Answer a = PlainGet.get(
                url, apiKey == null ? null : "Bearer " + apiKey, timeout, MAX_BODY_BYTES, "ctxprobe-models");
        if (a.body() == null) {
            throw new IOException(
                    "GET " + url + " sent more than " + ReadLimits.size(MAX_BODY_BYTES) + ", which is no model list");
        }
        return a;
    }

    private static String idOf(PlainGet.Answer a) throws IOException {
        try {
            JsonNode id = JSON.readTree(a.body()).path("data").path(0).path("id");
            if (!id.isString() || id.asString().isEmpty()) {
                throw new IOException("GET " + a.url() + " lists no model id: " + head(a.body()));
            }
            return id.asString();
        } catch (JacksonException e) {
            throw new IOException("GET " + a.url() + " did not answer JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static String head(String body) {
        return body.length() <= CompletionClient.ERROR_HEAD_BYTES
                ? body
                : body.substring(0, CompletionClient.ERROR_HEAD_BYTES);
    }
}
