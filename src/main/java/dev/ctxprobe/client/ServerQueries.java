package dev.ctxprobe.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * Plain GETs to a ready server for what it states about itself ({@code /props}, {@code /metrics}, {@code
 * /get_server_info}). An answer other than 200, a server that does not answer, and a body over {@value #MAX_BYTES}
 * bytes all state nothing: asking never fails a step.
 */
public final class ServerQueries implements AutoCloseable {
    static final long MAX_BYTES = 4L << 20;

    private final String baseUrl;
    private final String authorization;
    private final OkHttpClient http;

    /** Queries to {@code baseUrl}, each bounded by {@code timeout}, with {@code apiKey} as a bearer token if not null. */
    public ServerQueries(String baseUrl, Duration timeout, String apiKey) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.authorization = apiKey == null ? null : "Bearer " + apiKey;
        this.http = new OkHttpClient.Builder()
                .protocols(List.of(Protocol.HTTP_1_1))
                .callTimeout(timeout)
                .readTimeout(timeout)
                .connectTimeout(timeout)
                .retryOnConnectionFailure(false)
                .build();
    }

    /** The body of {@code GET path} when it answered 200 within the limits, else null. */
    public String get(String path) {
        Request.Builder b = new Request.Builder().url(baseUrl + path);
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        try (Response response = http.newCall(b.build()).execute()) {
            if (response.code() != 200) {
                return null;
            }
            BufferedSource source = response.body().source();
            if (source.request(MAX_BYTES + 1)) {
                return null;
            }
            return source.getBuffer().readString(StandardCharsets.UTF_8);
        } catch (IOException | IllegalArgumentException notStated) {
            return null;
        }
    }

    @Override
    public void close() {
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }
}
