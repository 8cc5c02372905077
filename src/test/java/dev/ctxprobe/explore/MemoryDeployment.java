package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.RequestObserver;
import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.launch.Endpoint;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Refusal;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.launch.Termination;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A vLLM-like deployment that answers from memory: a {@link Launcher} whose servers are records (no process, no
 * port) and a {@link ServerClient} that answers them (no socket). A server launched with a {@code --max-model-len}
 * above the KV capacity exits during startup with vLLM's own refusal, naming the length it could hold; a request of
 * a target listed as hanging times out. Everything the exploration does to it is counted, so unit tests hold whole
 * searches, the kept-server policy, resume and {@code --parallel} in milliseconds.
 */
final class MemoryDeployment implements Launcher, ServerClient {

    private final long kvTokens;
    private final Set<Long> hangingTargets;
    private final AtomicInteger ports = new AtomicInteger(40_000);
    private final Map<Integer, Server> servers = new ConcurrentHashMap<>();
    private final List<Long> launchedAt = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger live = new AtomicInteger();
    private final AtomicInteger mostLiveAtOnce = new AtomicInteger();
    /** Holds every readiness until this many servers are live at once, or its wait is over. */
    private volatile CountDownLatch together = new CountDownLatch(0);

    /**
     * @param kvTokens the most max_model_len a server starts with
     * @param hangingTargets targets whose requests time out, as on an engine that hangs at capacity
     */
    MemoryDeployment(long kvTokens, Set<Long> hangingTargets) {
        this.kvTokens = kvTokens;
        this.hangingTargets = Set.copyOf(hangingTargets);
    }

    /** Readiness waits (up to 300 ms) until {@code n} servers are live at once: servers that can overlap do. */
    MemoryDeployment overlapping(int n) {
        together = new CountDownLatch(n);
        return this;
    }

    /** The max_model_len of every launch, in order. */
    List<Long> launches() {
        return List.copyOf(launchedAt);
    }

    /** Servers launched and not stopped. */
    int live() {
        return live.get();
    }

    int mostLiveAtOnce() {
        return mostLiveAtOnce.get();
    }

    /** How many requests each launch served, in launch order. */
    List<Integer> requestsPerLaunch() {
        return servers.values().stream()
                .sorted((a, b) -> Integer.compare(a.port, b.port))
                .map(s -> s.requests.get())
                .toList();
    }

    @Override
    public Optional<Refusal> preflight(LaunchSpec spec) {
        return Optional.empty();
    }

    @Override
    public int freePort() {
        return ports.incrementAndGet();
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) {
        long maxModelLen = Long.parseLong(spec.argv().get(spec.argv().indexOf("--max-model-len") + 1));
        launchedAt.add(maxModelLen);
        Server s = new Server(spec, maxModelLen);
        servers.put(spec.port(), s);
        mostLiveAtOnce.accumulateAndGet(live.incrementAndGet(), Math::max);
        together.countDown();
        return s;
    }

    @Override
    public Function<String, String> queries(String baseUrl, Duration timeout, String apiKey) {
        return path -> null;
    }

    @Override
    public String servedModel(String baseUrl, String apiKey, Duration within) {
        return "memory-model";
    }

    @Override
    public LoadResult send(LoadPlan plan, RequestObserver observer) {
        Server s = servers.get(Integer.parseInt(baseUrlPort(plan.baseUrl())));
        List<RequestRecord> warmup = new ArrayList<>();
        for (int i = 0; i < plan.warmup(); i++) {
            warmup.add(s.answer(i, true, plan.targetLen()));
        }
        List<RequestRecord> measured = new ArrayList<>();
        for (int i = 0; i < plan.numPrompts(); i++) {
            measured.add(s.answer(i, false, plan.targetLen()));
        }
        return new LoadResult(warmup, measured, 0, 1);
    }

    private static String baseUrlPort(String baseUrl) {
        return baseUrl.substring(baseUrl.lastIndexOf(':') + 1).replaceAll("/.*", "");
    }

    /** One pretend server: ready at once, or out at startup when its length does not fit. */
    private final class Server implements ServerHandle {
        private final int port;
        private final Path log;
        private final long maxModelLen;
        private final AtomicInteger requests = new AtomicInteger();
        private volatile Termination ended;
        private volatile boolean stopped;

        Server(LaunchSpec spec, long maxModelLen) {
            this.port = spec.port();
            this.log = spec.logFile();
            this.maxModelLen = maxModelLen;
            try {
                Files.createDirectories(log.getParent());
                String refusal = "ValueError: To serve at least one request with the model's max seq len ("
                        + maxModelLen + "), (1.0 GiB KV cache is needed, which is larger than the available KV cache"
                        + " memory (0.5 GiB). Based on the available memory, the estimated maximum model length is "
                        + kvTokens + ". Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when"
                        + " initializing the engine.";
                Files.writeString(
                        log, maxModelLen > kvTokens ? refusal + "\n" : "INFO: Application startup complete.\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (maxModelLen > kvTokens) {
                ended = Termination.exited(1);
            }
        }

        RequestRecord answer(int index, boolean warmup, long target) {
            requests.incrementAndGet();
            if (hangingTargets.contains(target)) {
                return new RequestRecord(
                        index,
                        warmup,
                        target,
                        200,
                        RequestOutcome.TIMEOUT,
                        null,
                        null,
                        null,
                        0,
                        false,
                        0,
                        1L,
                        null,
                        null,
                        2,
                        0.1,
                        null,
                        null,
                        null,
                        List.of(),
                        "no answer within request_s",
                        0,
                        null,
                        "");
            }
            return new RequestRecord(
                    index,
                    warmup,
                    target,
                    200,
                    RequestOutcome.OK,
                    (int) target,
                    1,
                    "length",
                    1,
                    true,
                    0,
                    1L,
                    2L,
                    2L,
                    3,
                    0.1,
                    1.0,
                    1.0,
                    null,
                    List.of(),
                    null,
                    10,
                    null,
                    "");
        }

        @Override
        public String id() {
            return "memory:" + port;
        }

        @Override
        public Endpoint endpoint() {
            return new Endpoint("127.0.0.1", port);
        }

        @Override
        public Path log() {
            return log;
        }

        @Override
        public Long pid() {
            return null;
        }

        @Override
        public List<Long> memoryBeforeMib() {
            return null;
        }

        @Override
        public Readiness awaitReady() throws InterruptedException {
            together.await(300, TimeUnit.MILLISECONDS);
            return ended != null
                    ? new Readiness.Exited(Duration.ofMillis(5), ended)
                    : new Readiness.Ready(Duration.ofMillis(5), "GET /health 200");
        }

        @Override
        public boolean isAlive() {
            return ended == null;
        }

        @Override
        public Optional<Termination> awaitExit(Duration limit) {
            return Optional.ofNullable(ended);
        }

        @Override
        public Optional<Termination> termination() {
            return Optional.ofNullable(ended);
        }

        @Override
        public synchronized StopReport stop() {
            if (!stopped) {
                stopped = true;
                live.decrementAndGet();
                if (ended == null) {
                    ended = Termination.stopped(0);
                }
            }
            return new StopReport(true, List.of(), ended, Duration.ZERO, null);
        }
    }
}
