package dev.ctxprobe.client;

import java.io.IOException;
import java.net.ProtocolException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;

/**
 * Streams OpenAI {@code /v1/completions} requests and timestamps every server-sent event. Calls are
 * synchronous and meant for virtual threads; it reports raw facts and classifies nothing. Each request has its own
 * connection ({@link Http1Exchange}), closed when its stream ends.
 */
public final class CompletionClient implements AutoCloseable {

    /** How much of a non-200 body or an error event is kept: enough for any engine's message. */
    static final int ERROR_HEAD_BYTES = 2048;

    /** Ends requests that outlive the request timeout: one platform thread for all of them, idle when none is due. */
    private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

    private final Http1Exchange.Target target;
    private final String extraHeaders;
    private final Duration requestTimeout;
    private final int connectTimeoutMillis;
    private final ReadLimits limits;
    private final Set<Http1Exchange> inFlight = ConcurrentHashMap.newKeySet();

    /**
     * @param baseUrl the server root, e.g. {@code http://127.0.0.1:8000} (a trailing {@code /v1} is accepted)
     * @param requestTimeout bounds each whole request, from connecting to the last byte
     */
    public CompletionClient(String baseUrl, Duration requestTimeout) {
        this(baseUrl, requestTimeout, null);
    }

    /** A client that authenticates with {@code apiKey} as a bearer token (null for none), with default read limits. */
    public CompletionClient(String baseUrl, Duration requestTimeout, String apiKey) {
        this(baseUrl, requestTimeout, apiKey, ReadLimits.forOutput(1));
    }

    /**
     * A client whose requests end, as {@link RequestOutcome#TOO_LARGE}, at the first byte past {@code limits}. Every
     * request has its own connection, so nothing here is sized by how many run at once.
     *
     * @param requestTimeout bounds each whole request, from connecting to the last byte: the headers, the first
     *     event and the end of the stream must all come within it
     */
    public CompletionClient(String baseUrl, Duration requestTimeout, String apiKey, ReadLimits limits) {
        this(baseUrl, requestTimeout, apiKey, limits, true);
    }

    /** {@code warm}: warm the read path first ({@link WarmUp}), false only for the warm-up's own client. */
    CompletionClient(String baseUrl, Duration requestTimeout, String apiKey, ReadLimits limits, boolean warm) {
        this.limits = limits;
        this.target = Http1Exchange.Target.of(endpoint(baseUrl, "completions"));
        this.extraHeaders = apiKey == null ? "" : "Authorization: Bearer " + apiKey + "\r\n";
        this.requestTimeout = requestTimeout;
        // A connect timeout of 0 would mean none at all.
        this.connectTimeoutMillis = (int) Math.clamp(requestTimeout.toMillis(), 1, Integer.MAX_VALUE);
        if (warm) {
            WarmUp.once();
        }
    }

    /**
     * Warms the read path now, once per process ({@link WarmUp}), as the first client does anyway: so that work before
     * a step's requests (a pass-key control) is timed without it.
     */
    public static void warmUp() {
        WarmUp.once();
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
        StreamReading reading = new StreamReading(limits);
        if (observer != RequestObserver.NONE) {
            reading.onFirstToken = () -> observer.firstToken(request.index(), request.warmup());
        }
        // Before the clock starts: what the observer does costs the measurement nothing.
        observer.sending(request.index(), request.warmup());
        long start = System.nanoTime();
        Deadline deadline = new Deadline();
        ScheduledFuture<?> due = DEADLINES.schedule(deadline, requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
        Http1Exchange exchange = null;
        try {
            exchange = Http1Exchange.open(target, connectTimeoutMillis);
            deadline.exchange(exchange);
            inFlight.add(exchange);
            // llama-server closes the connection after a streamed answer though it says Keep-Alive, and one
            // connection per request costs no TTFT, which is timed from the request's first byte.
            exchange.post(target, extraHeaders, "application/json", "text/event-stream", request.body());
            Http1Exchange.Head head = exchange.readHead();
            reading.status = head.status();
            reading.counting = new StreamReading.CountingSource(
                    exchange.body(head), limits.responseBytes(), exchange::arrivalNanos);
            BufferedSource source = Okio.buffer(reading.counting);
            if (reading.status != 200) {
                reading.outcome = RequestOutcome.HTTP_STATUS;
                reading.errorText = head(source);
            } else if (isJson(head.contentType())) {
                reading.readJsonBody(source);
            } else {
                reading.readEvents(source);
            }
        } catch (StreamReading.TooLarge e) {
            // The server may go on sending: the connection is dropped (below), not drained.
            reading.outcome = RequestOutcome.TOO_LARGE;
            reading.errorText = e.getMessage();
        } catch (IOException e) {
            if (deadline.fired) {
                reading.outcome = RequestOutcome.TIMEOUT;
                reading.errorText = "the request did not end within its timeout of " + seconds(requestTimeout) + " ("
                        + describe(e) + ")";
            } else {
                reading.outcome = classify(e);
                reading.errorText = describe(e);
            }
        } finally {
            due.cancel(false);
            if (exchange != null) {
                inFlight.remove(exchange);
                exchange.close();
            }
        }
        long end = System.nanoTime();
        return record(reading, request, start, exchange, end);
    }

    /** Ends every request in flight; their records come back as failures at once. */
    public void cancelAll() {
        for (Http1Exchange exchange : inFlight) {
            exchange.close();
        }
    }

    /** Ends what is still in flight: a client holds nothing else. */
    @Override
    public void close() {
        cancelAll();
    }

    private static ScheduledThreadPoolExecutor deadlines() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(
                1, Thread.ofPlatform().name("ctxprobe-deadlines").daemon(true).factory());
        // A request that ends in time cancels its deadline; without this each would stay queued for the timeout.
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /** Closes a request's connection when its whole-request timeout is up, even mid-connect or mid-write. */
    private static final class Deadline implements Runnable {
        private Http1Exchange exchange;
        volatile boolean fired;

        synchronized void exchange(Http1Exchange exchange) {
            this.exchange = exchange;
            if (fired) {
                exchange.close();
            }
        }

        @Override
        public synchronized void run() {
            fired = true;
            if (exchange != null) {
                exchange.close();
            }
        }
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0
                ? d.toSeconds() + " s"
                : String.format(Locale.ROOT, "%.3f s", d.toMillis() / 1000.0);
    }

    /** {@code application/json}, with or without parameters: a server that ignored {@code stream: true}. */
    static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String type = (semicolon >= 0 ? contentType.substring(0, semicolon) : contentType).strip();
        int slash = type.indexOf('/');
        return slash > 0 && type.substring(slash + 1).strip().equalsIgnoreCase("json");
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
        // A body cut short (EOFException) is a closed connection, a crashed server, not garbage.
        if (e instanceof ProtocolException) {
            return RequestOutcome.PROTOCOL_ERROR;
        }
        return RequestOutcome.CONNECTION_FAILED;
    }

    // What happened to the connection in words, never a Java class name (docs/results.md#requests), then
    // the system's own message.
    static String describe(Throwable e) {
        StringBuilder text = new StringBuilder(
                switch (e) {
                    case java.io.EOFException x -> "the connection ended early";
                    case java.net.ConnectException x -> "the connection was refused";
                    case java.net.NoRouteToHostException x -> "no route to the host";
                    case java.net.UnknownHostException x -> "unknown host";
                    case SocketTimeoutException x -> "no answer in time";
                    case ProtocolException x -> "not a valid HTTP answer";
                    case java.net.SocketException x -> "the connection failed";
                    case IOException x -> "the connection failed";
                    default -> "the request failed";
                });
        if (e.getMessage() != null) {
            text.append(": ").append(e.getMessage());
        }
        if (e.getCause() != null && e.getCause() != e) {
            text.append(" (caused by ").append(describe(e.getCause())).append(')');
        }
        return text.toString();
    }

    private static RequestRecord record(
            StreamReading reading, CompletionRequest request, long start, Http1Exchange exchange, long end) {
        Long tSend = exchange != null && exchange.sendStartNanos != 0 ? exchange.sendStartNanos : null;
        Long bodyEnd = exchange != null && exchange.bodyEndNanos != 0 ? exchange.bodyEndNanos : null;
        Long tFirst = reading.choiceEvents > 0 ? reading.tFirst : null;
        Long tLast = reading.choiceEvents > 0 ? reading.tLast : null;
        Double sendMs = tSend != null && bodyEnd != null ? millis(bodyEnd - tSend) : null;
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
                reading.counting != null ? reading.counting.bytes : 0,
                reading.cachedTokens,
                reading.textHead.toString(),
                reading.promptTokensWritten);
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }
}
