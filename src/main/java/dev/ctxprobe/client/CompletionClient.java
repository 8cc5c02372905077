package dev.ctxprobe.client;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ProtocolException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.ConnectionPool;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;

/**
 * Streams OpenAI {@code /v1/completions} requests and timestamps every server-sent event. Calls are
 * synchronous and meant for virtual threads; it reports raw facts and classifies nothing.
 */
public final class CompletionClient implements AutoCloseable {

    /** How much of a non-200 body or an error event is kept: enough for any engine's message. */
    static final int ERROR_HEAD_BYTES = 2048;

    private static final MediaType JSON_TYPE = MediaType.get("application/json");

    private final String completionsUrl;
    private final String authorization;
    private final OkHttpClient http;

    /**
     * @param baseUrl the server root, e.g. {@code http://127.0.0.1:8000} (a trailing {@code /v1} is accepted)
     * @param requestTimeout bounds each whole request, from connecting to the last byte
     * @param maxConcurrency the number of requests that may be in flight together
     */
    public CompletionClient(String baseUrl, Duration requestTimeout, int maxConcurrency) {
        this(baseUrl, requestTimeout, maxConcurrency, null);
    }

    /** A client that authenticates with {@code apiKey} as a bearer token (null for none). */
    public CompletionClient(String baseUrl, Duration requestTimeout, int maxConcurrency, String apiKey) {
        this.authorization = apiKey == null ? null : "Bearer " + apiKey;
        this.completionsUrl = endpoint(baseUrl, "completions");
        this.http = new OkHttpClient.Builder()
                .protocols(List.of(Protocol.HTTP_1_1))
                // OkHttp's 10 s default read timeout is shorter than one long prefill.
                .readTimeout(requestTimeout)
                .writeTimeout(requestTimeout)
                .connectTimeout(requestTimeout)
                // Bounds a server that sends headers and then hangs without ever closing.
                .callTimeout(requestTimeout)
                .connectionPool(new ConnectionPool(Math.max(5, maxConcurrency), 5, TimeUnit.MINUTES))
                // A retried request would be a second, unrecorded prefill of a huge prompt.
                .retryOnConnectionFailure(false)
                .eventListenerFactory(call -> {
                    SendTiming timing = call.request().tag(SendTiming.class);
                    return timing != null ? timing : EventListener.NONE;
                })
                .build();
    }

    /** {@code base + "/v1/" + path}, tolerating a trailing slash or {@code /v1} on the base. */
    static String endpoint(String baseUrl, String path) {
        String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        return (base.endsWith("/v1") ? base : base + "/v1") + "/" + path;
    }

    /** Sends one request and reads its stream to the end; never throws for a server's misbehaviour. */
    public RequestRecord send(CompletionRequest request) {
        return send(request, RequestObserver.NONE);
    }

    /** Sends one request, telling {@code observer} when it goes out and when its first token arrives. */
    public RequestRecord send(CompletionRequest request, RequestObserver observer) {
        SendTiming timing = new SendTiming();
        Request.Builder builder = new Request.Builder();
        if (authorization != null) {
            builder.header("Authorization", authorization);
        }
        Request httpRequest = builder.url(completionsUrl)
                .header("Accept", "text/event-stream")
                // llama-server closes the connection after a streamed answer though it says Keep-Alive: a request
                // on a reused connection would fail before it is sent. A fresh connection costs no TTFT, which is
                // timed from the request's first byte.
                .header("Connection", "close")
                .post(RequestBody.create(request.body(), JSON_TYPE, 0, request.body().length))
                .tag(SendTiming.class, timing)
                .build();
        StreamReading reading = new StreamReading();
        if (observer != RequestObserver.NONE) {
            reading.onFirstToken = () -> observer.firstToken(request.index(), request.warmup());
        }
        // Before the clock starts: what the observer does costs the measurement nothing.
        observer.sending(request.index(), request.warmup());
        long start = System.nanoTime();
        Call call = http.newCall(httpRequest);
        try (Response response = call.execute()) {
            reading.status = response.code();
            reading.counting = new StreamReading.CountingSource(response.body().source());
            BufferedSource source = Okio.buffer(reading.counting);
            if (reading.status != 200) {
                reading.outcome = RequestOutcome.HTTP_STATUS;
                reading.errorText = head(source);
            } else if (isJson(response.body())) {
                reading.readJsonBody(source);
            } else {
                reading.readEvents(source);
            }
        } catch (IOException e) {
            reading.outcome = classify(e);
            reading.errorText = describe(e);
        }
        long end = System.nanoTime();
        return record(reading, request, start, timing, end);
    }

    /** Cancels every call in flight; their records come back as failures at once. */
    public void cancelAll() {
        http.dispatcher().cancelAll();
    }

    @Override
    public void close() {
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    private static boolean isJson(ResponseBody body) {
        MediaType type = body.contentType();
        return type != null && type.subtype().equalsIgnoreCase("json");
    }

    private static String head(BufferedSource source) throws IOException {
        source.request(ERROR_HEAD_BYTES);
        Buffer buffered = source.getBuffer();
        return buffered.readString(Math.min(buffered.size(), ERROR_HEAD_BYTES), StandardCharsets.UTF_8);
    }

    static RequestOutcome classify(IOException e) {
        if (e instanceof SocketTimeoutException) {
            return RequestOutcome.TIMEOUT;
        }
        // OkHttp's call timeout surfaces as InterruptedIOException("timeout").
        if (e instanceof InterruptedIOException && "timeout".equals(e.getMessage())) {
            return RequestOutcome.TIMEOUT;
        }
        if (e instanceof ProtocolException && !isTruncation(e)) {
            return RequestOutcome.PROTOCOL_ERROR;
        }
        return RequestOutcome.CONNECTION_FAILED;
    }

    /** A body cut short is a closed connection (a crashed server), not garbage. */
    private static boolean isTruncation(IOException e) {
        return e instanceof EOFException
                || (e.getMessage() != null && e.getMessage().startsWith("unexpected end of stream"));
    }

    private static String describe(Throwable e) {
        StringBuilder text = new StringBuilder(e.getClass().getSimpleName());
        if (e.getMessage() != null) {
            text.append(": ").append(e.getMessage());
        }
        if (e.getCause() != null && e.getCause() != e) {
            text.append(" (caused by ").append(describe(e.getCause())).append(')');
        }
        return text.toString();
    }

    private static RequestRecord record(
            StreamReading reading, CompletionRequest request, long start, SendTiming timing, long end) {
        Long tSend = timing.headersStart;
        Long tFirst = reading.choiceEvents > 0 ? reading.tFirst : null;
        Long tLast = reading.choiceEvents > 0 ? reading.tLast : null;
        Double sendMs = tSend != null && timing.bodyEnd != null ? millis(timing.bodyEnd - tSend) : null;
        Double ttft = tSend != null && tFirst != null ? millis(tFirst - tSend) : null;
        Double e2e = tSend != null && tLast != null ? millis(tLast - tSend) : null;
        Integer completionTokens = reading.completionTokens;
        Double tpot = ttft != null && completionTokens != null && completionTokens > 1
                ? (e2e - ttft) / (completionTokens - 1)
                : null;
        return new RequestRecord(
                request.index(),
                request.warmup(),
                request.targetLen(),
                reading.status,
                reading.outcome,
                reading.promptTokens,
                completionTokens,
                reading.finishReason,
                reading.choiceEvents,
                reading.sawDone,
                start,
                tSend,
                tFirst,
                tLast,
                end,
                sendMs,
                ttft,
                e2e,
                tpot,
                reading.itlMs(),
                reading.errorText,
                reading.counting != null ? reading.counting.bytes : 0);
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    /** Stamps the moment the request starts going out and the moment its body is fully written. */
    private static final class SendTiming extends EventListener {
        volatile Long headersStart;
        volatile Long bodyEnd;

        @Override
        public void requestHeadersStart(Call call) {
            headersStart = System.nanoTime();
        }

        @Override
        public void requestBodyEnd(Call call, long byteCount) {
            bodyEnd = System.nanoTime();
        }
    }
}
