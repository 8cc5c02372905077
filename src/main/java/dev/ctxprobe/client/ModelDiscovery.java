package dev.ctxprobe.client;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Asks a server which model it serves: vLLM rejects requests that name another one. */
public final class ModelDiscovery {

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

    /** As {@link #firstModelId(String, Duration)}, authenticating with {@code apiKey} when it is not null. */
    public static String firstModelId(String baseUrl, Duration timeout, String apiKey) throws IOException {
        OkHttpClient http = new OkHttpClient.Builder()
                .protocols(List.of(Protocol.HTTP_1_1))
                .callTimeout(timeout)
                .readTimeout(timeout)
                .connectTimeout(timeout)
                .retryOnConnectionFailure(false)
                .build();
        String url = CompletionClient.endpoint(baseUrl, "models");
        try (Response response = http.newCall(
                        authorized(new Request.Builder(), apiKey).url(url).build())
                .execute()) {
            String body = response.body().string();
            if (response.code() != 200) {
                throw new IOException("GET " + url + " answered " + response.code() + ": " + head(body));
            }
            JsonNode id = JSON.readTree(body).path("data").path(0).path("id");
            if (!id.isString() || id.asString().isEmpty()) {
                throw new IOException("GET " + url + " lists no model id: " + head(body));
            }
            return id.asString();
        } catch (JacksonException e) {
            throw new IOException("GET " + url + " did not answer JSON: " + e.getOriginalMessage(), e);
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    /** Same as {@link #firstModelId(String, Duration)} with a 10 s timeout. */
    public static String firstModelId(String baseUrl) throws IOException {
        return firstModelId(baseUrl, Duration.ofSeconds(10));
    }

    private static String head(String body) {
        return body.length() <= CompletionClient.ERROR_HEAD_BYTES
                ? body
                : body.substring(0, CompletionClient.ERROR_HEAD_BYTES);
    }

    private static Request.Builder authorized(Request.Builder b, String apiKey) {
        return apiKey == null ? b : b.header("Authorization", "Bearer " + apiKey);
    }
}
