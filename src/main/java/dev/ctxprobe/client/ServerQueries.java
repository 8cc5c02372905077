package dev.ctxprobe.client;

import java.io.IOException;
import java.time.Duration;

/**
 * Plain GETs to a ready server for what it states about itself ({@code /props}, {@code /metrics}, {@code
 * /get_server_info}). An answer other than 200, a server that does not answer, and a body over {@value #MAX_BYTES}
 * bytes all state nothing: asking never fails a step.
 */
public final class ServerQueries {
    static final long MAX_BYTES = 4L << 20;

    private final String baseUrl;
    private final String authorization;
    private final Duration timeout;

    /** Queries to {@code baseUrl}, each bounded by {@code timeout}, with {@code apiKey} as a bearer token if not null. */
    public ServerQueries(String baseUrl, Duration timeout, String apiKey) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.authorization = apiKey == null ? null : "Bearer " + apiKey;
        this.timeout = timeout;
    }

    /**
     * The body of {@code GET path} when it answered 200 within the limits, else null. A thread interrupt (a Ctrl-C)
     * ends the wait at once: the answer is null and the interrupt stays set for the caller.
     */
    public String get(String path) {
        try {
            PlainGet.Answer answer = PlainGet.get(baseUrl + path, authorization, timeout, MAX_BYTES, "ctxprobe-query");
            return answer.status() == 200 ? answer.body() : null;
        } catch (IOException notStated) {
            return null;
        }
    }
}
