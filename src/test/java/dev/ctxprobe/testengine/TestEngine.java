package dev.ctxprobe.testengine;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.ctxprobe.testengine.EngineOptions.Fault;
import dev.ctxprobe.testengine.EngineOptions.Mode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import sun.misc.Signal;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A fake OpenAI-compatible LLM server that imitates one engine's log texts, limits, readiness and faults; integration
 * tests run it as a real child process in place of vLLM, SGLang, llama.cpp, LMDeploy or TGI.
 */
public final class TestEngine {

    /** KV bytes per token used to turn token counts into the GiB figures of vLLM's refusal (an 8B-class model). */
    private static final double KV_BYTES_PER_TOKEN = 131_072;

    private static final String MODEL = "test-model";

    /** vLLM's hang at capacity: a request needing more than this share of the KV cache is never scheduled. */
    private static final double CAPACITY_HANG = 0.995;

    /** vLLM's auto-fit never exceeds the model's derived length; this one's when none is given. */
    private static final long DEFAULT_DERIVED_MAX = 1_048_576;

    private final EngineOptions options;
    /** The KV pool shared by the requests in flight, null when every request is served at once. */
    private final KvPool pool;
    /** The context the engine serves: as asked, or fitted to memory with vLLM's {@code auto}. */
    private final long mml;
    /** llama.cpp's context arithmetic and texts; null in other modes. */
    private final LlamaCpp llama;

    private final AtomicLong requestIds = new AtomicLong();

    /**
     * A request the engine holds, for vLLM's progress gauges: its prefill runs from {@code startNanos} for {@code
     * prefillMs} (infinite for one admitted and never scheduled).
     */
    private record Held(long startNanos, double prefillMs, long promptLen) {}

    private final Map<Long, Held> held = new ConcurrentHashMap<>();
    private final AtomicLong heldIds = new AtomicLong();
    private final AtomicLong promptTokensTotal = new AtomicLong();
    private final AtomicLong generationTokensTotal = new AtomicLong();
    /** Memory the engine really uses (touched pages), so that a memory limit below it kills the engine. */
    private final List<byte[]> resident = new ArrayList<>();
    /** The other ranks' connections, held open while the engine serves: closing them ends the workers. */
    private final List<Socket> workers = new ArrayList<>();

    private volatile boolean ready;
    private volatile boolean bound;
    /** Until this System.nanoTime(), a server with health-early answers 503 to everything but /health. */
    private volatile long servesFrom;

    private TestEngine(EngineOptions options) {
        this.options = options;
        long derived = options.derivedMax() != null ? options.derivedMax() : DEFAULT_DERIVED_MAX;
        this.mml = options.maxModelLen() == EngineOptions.AUTO
                ? Math.min(options.capacity(), derived)
                : options.maxModelLen();
        this.llama = options.mode() == Mode.LLAMACPP ? new LlamaCpp(options) : null;
        long poolTokens = options.kvPool() == EngineOptions.POOL_IS_CAPACITY ? options.capacity() : options.kvPool();
        this.pool = poolTokens > 0 ? new KvPool(poolTokens, maxRunning(), options.preempt()) : null;
    }

    /**
     * The requests run together at most: as given ({@code --max-num-seqs}, {@code --max-running-requests}), else in
     * SGLang mode its own default, {@code min(max_total_num_tokens / 2, req_to_token_pool size)} with the pool of
     * request rows {@code min(max(max_total_num_tokens / context_len * 512, 2048), 4096)} (tp_worker.py,
     * model_runner.py), which its scheduler line states; 0 for no cap.
     */
    private int maxRunning() {
        if (options.maxRunning() > 0) {
            return options.maxRunning();
        }
        if (options.mode() != Mode.SGLANG) {
            return 0;
        }
        long cap = options.capacity();
        long rows = Math.min(Math.max(cap * 512 / Math.max(1, mml), 2048), 4096);
        return (int) Math.max(1, Math.min(cap / 2, rows));
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        EngineOptions options;
        try {
            options = EngineOptions.parse(args);
        } catch (IllegalArgumentException e) {
            die(2, EngineOptions.USAGE, "TestEngine: error: " + e.getMessage());
            return;
        }
        new TestEngine(options).start();
    }

    /** Loads, refuses or becomes ready as the imitated engine would; the HTTP server thread keeps the JVM alive. */
    private void start() throws IOException, InterruptedException {
        installTermHandler();
        if (options.has(Fault.EXIT_AT_ONCE)) {
            die(
                    1,
                    "Traceback (most recent call last):",
                    "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py\", line 512, in run_engine_core",
                    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}");
        }
        if (options.has(Fault.BAD_ARGS)) {
            die(
                    2,
                    "usage: api_server.py [-h] [--host HOST] [--port PORT] [--max-model-len MAX_MODEL_LEN]",
                    "api_server.py: error: argument --max-model-len: invalid int value: '" + options.maxModelLen()
                            + "k'");
        }
        if (options.has(Fault.LEAK_ENV)) {
            die(1, "ERROR engine failed to start; its environment was " + new java.util.TreeMap<>(System.getenv()));
        }
        if (options.has(Fault.LEAVE_CHILD)) {
            leaveChild();
        }
        if (options.has(Fault.LEAVE_ORPHAN)) {
            leaveOrphan();
        }
        if (options.has(Fault.SETPGID_CHILD)) {
            // bash's job control puts a background job in a process group of its own.
            shell("bash", "set -m; sleep 3600 >/dev/null 2>&1 & echo \"INFO setpgid child pid $!\"");
        }
        if (options.has(Fault.SETSID_DAEMON)) {
            // Fork, setsid, fork again: the daemon's parent exits and it is re-parented, in a session of its own.
            shell("sh", "setsid sh -c 'sleep 3600 >/dev/null 2>&1 & echo \"INFO daemon pid $!\"' &");
        }
        if (options.nodeRank() > 0) {
            serveAsWorker();
            return;
        }
        boolean bindEarly =
                options.mode().bindsWhileLoading() || options.has(Fault.NEVER_READY) || options.has(Fault.SLOW_HEALTH);
        if (bindEarly) {
            bind();
        }
        logLoading();
        // What the launch gave it, where the test (and only the test) reads it: outside the run folder.
        if (options.keysTo() != null) {
            StringBuilder got = new StringBuilder();
            options.keys()
                    .forEach((flag, key) ->
                            got.append(flag).append(' ').append(key).append('\n'));
            Files.writeString(Path.of(options.keysTo()), got.toString());
        }
        if (options.has(Fault.CHATTY_STARTUP)) {
            chatter(options.logMib());
        }
        holdResidentMemory();
        if (options.has(Fault.CONTROL_BYTES)) {
            info("Loading " + CONTROL + " weights");
        }
        loadWeights();
        // Loading lasts as long as a test wants: until it removes the file.
        while (options.holdWhile() != null && Files.exists(Path.of(options.holdWhile()))) {
            Thread.sleep(50);
        }
        rejectAboveTheModelsLimit();
        autoFit();
        if (options.has(Fault.FATAL_THEN_HANG)) {
            // vLLM's multiproc executor prints a worker's failure with the worker's prefix; the rest waits.
            String worker = "(VllmWorker TP1 pid=" + ProcessHandle.current().pid() + ") ";
            System.err.println(worker + "ERROR 07-08 14:35:34 [multiproc_executor.py:546] WorkerProc failed to start.");
            System.err.println(worker + "Traceback (most recent call last):");
            System.err.println(
                    worker + "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py\","
                            + " line 246, in determine_available_memory");
            System.err.println(worker + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1"
                    + " has a total capacity of 139.72 GiB of which 1.12 GiB is free.");
            System.err.flush();
            hang();
        }
        if (options.has(Fault.SILENT_STALL)) {
            info("Loading safetensors checkpoint shards: 45% Completed | 29/64");
            System.out.flush();
            hang();
        }
        if (options.has(Fault.OOM_STARTUP)) {
            die(
                    1,
                    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity"
                            + " of 139.72 GiB of which 1.12 GiB is free.");
        }
        refuseIfItDoesNotFit();
        if (!bindEarly) {
            bind();
        }
        if (options.has(Fault.NEVER_READY)) {
            info("Waiting for the scheduler to become ready");
            return;
        }
        awaitWorkers();
        servesFrom = System.nanoTime() + (options.has(Fault.HEALTH_EARLY) ? options.notReadyMs() * 1_000_000 : 0);
        ready = true;
        logReady();
    }

    /** Runs a shell line whose output goes to the engine's log, and waits for the shell (not its children). */
    private static void shell(String shell, String line) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(shell, "-c", line)
                .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        p.waitFor();
    }

    private static void chatter(long mib) {
        String line = "DEBUG " + "chatter ".repeat(15) + "\n";
        byte[] bytes = line.repeat(1024).getBytes(StandardCharsets.UTF_8);
        long total = mib << 20;
        for (long written = 0; written < total; written += bytes.length) {
            System.out.write(bytes, 0, bytes.length);
        }
        System.out.flush();
    }

    /** SIGTERM ends the engine with exit code 0, as the real servers do, unless the fault says to ignore it. */
    private void installTermHandler() {
        boolean ignore = options.has(Fault.IGNORE_SIGTERM);
        Signal.handle(new Signal("TERM"), signal -> {
            if (ignore) {
                info("Received SIGTERM, ignoring it");
            } else if (llama != null) {
                llama.stopping().forEach(System.err::println);
                System.exit(llama.exitCode(0));
            } else {
                info("Received SIGTERM, shutting down");
                System.exit(0);
            }
        });
    }

    /** A grandchild in the engine's process group that outlives the engine, like vLLM's EngineCore. */
    private static void leaveChild() throws IOException {
        Process child = new ProcessBuilder("sleep", "3600")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        info("child pid " + child.pid());
    }

    /** A process in a session of its own ({@code setsid}), as a daemonizing engine worker: no group signal reaches it. */
    private static void leaveOrphan() throws IOException {
        Process orphan = new ProcessBuilder("setsid", "sleep", "3600")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        info("orphan pid " + orphan.pid() + " in a session of its own");
    }

    private void holdResidentMemory() {
        for (long mb = 0; mb < options.residentMb(); mb++) {
            byte[] block = new byte[1 << 20];
            for (int i = 0; i < block.length; i += 4096) {
                block[i] = 1;
            }
            resident.add(block);
        }
        if (options.residentMb() > 0) {
            info("holding " + options.residentMb() + " MiB");
        }
    }

    /**
     * Rank 0 of a multi-node engine (SGLang's {@code --nnodes/--node-rank/--dist-init-addr}): it listens on the
     * dist port and is ready only once every other rank has connected.
     */
    private void awaitWorkers() throws IOException {
        if (options.nnodes() <= 1) {
            return;
        }
        int port = Integer.parseInt(
                options.distInitAddr().substring(options.distInitAddr().lastIndexOf(':') + 1));
        ServerSocket dist = new ServerSocket(port);
        info("rank 0 of " + options.nnodes() + ": waiting for " + (options.nnodes() - 1) + " ranks on port " + port);
        for (int connected = 1; connected < options.nnodes(); connected++) {
            Socket worker = dist.accept();
            String hello = new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8))
                    .readLine();
            info("rank 0: " + hello + " joined from " + worker.getRemoteSocketAddress());
            workers.add(worker);
        }
    }

    /** A rank above 0: connects to rank 0's dist address, serves no HTTP, and ends when rank 0 goes away. */
    private void serveAsWorker() throws IOException, InterruptedException {
        String addr = options.distInitAddr();
        String host = addr.substring(0, addr.lastIndexOf(':'));
        int port = Integer.parseInt(addr.substring(addr.lastIndexOf(':') + 1));
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            try (Socket head = new Socket(host, port)) {
                OutputStream out = head.getOutputStream();
                out.write(("rank " + options.nodeRank() + " of " + options.nnodes() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                info("rank " + options.nodeRank() + " of " + options.nnodes() + ": connected to the head at " + addr);
                int eof = head.getInputStream().read();
                die(1, "rank " + options.nodeRank() + ": the head at " + addr + " went away (" + eof + ")");
                return;
            } catch (ConnectException notYet) {
                if (System.nanoTime() > deadline) {
                    die(1, "rank " + options.nodeRank() + ": no head at " + addr + " within 120 s");
                }
                Thread.sleep(100);
            }
        }
    }

    private void bind() throws IOException {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(options.host(), options.port()), 128);
        } catch (BindException e) {
            die(
                    1,
                    "ERROR: [Errno 98] error while attempting to bind on address ('" + options.host() + "', "
                            + options.port() + "): address already in use");
            return;
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
        bound = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
    }

    /** What {@code --fault control-bytes} sends: a window title (OSC), a bell, a NUL, a screen clear, red. */
    static final String CONTROL = "\u001b]0;pwned-title\u0007\u0000\u001b[2J\u001b[31mred\u0007";

    private void logLoading() {
        switch (options.mode()) {
            case VLLM ->
                info("Initializing a V1 LLM engine with config: model='" + MODEL + "', max_seq_len="
                        + (options.maxModelLen() == EngineOptions.AUTO ? "auto" : mml));
            case SGLANG -> info("server_args=ServerArgs(model_path='" + MODEL + "', context_length=" + mml + ")");
            case LLAMACPP -> llama.loading().forEach(System.err::println);
            case LMDEPLOY -> info("TurbomindEngineConfig(session_len=" + mml + ")");
            case TGI -> info("Args { model_id: \"" + MODEL + "\", max_total_tokens: Some(" + mml + ") }");
        }
    }

    /**
     * Spends the startup time as vLLM and SGLang do, saying so as they do: the checkpoint shards and then the CUDA
     * graphs, each a tqdm bar that rewrites its line with carriage returns on stderr. The other engines only wait.
     */
    private void loadWeights() throws InterruptedException {
        long total = options.startupMs();
        boolean vllm = options.mode() == Mode.VLLM;
        if (total <= 0 || !(vllm || options.mode() == Mode.SGLANG)) {
            Thread.sleep(Math.max(0, total));
            return;
        }
        if (!vllm) {
            info("Load weight begin. avail mem=78.50 GB");
        }
        long weights = total * 3 / 4;
        progress("Loading safetensors checkpoint shards", " Completed | ", 64, weights);
        if (vllm) {
            info("Loading weights took " + String.format(Locale.ROOT, "%.2f", weights / 1000.0) + " seconds");
            progress("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)", "|##########| ", 67, total - weights);
        } else {
            info("Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=10.31 GB, mem"
                    + " usage=68.19 GB.");
            info("Capture cuda graph begin. This can take up to several minutes. avail mem=9.01 GB");
            progress("Capturing batches (bs=1 avail_mem=8.50 GB)", "|##########| ", 4, total - weights);
        }
    }

    /** A tqdm bar of {@code steps} over {@code ms}, redrawn every quarter second, ended with a newline. */
    private static void progress(String what, String bar, int steps, long ms) throws InterruptedException {
        long start = System.nanoTime();
        while (true) {
            long done = Math.min(ms, (System.nanoTime() - start) / 1_000_000);
            int k = ms == 0 ? steps : (int) (steps * done / ms);
            System.err.print("\r" + what + ": " + String.format(Locale.ROOT, "%3d%%", 100 * k / steps) + bar + k + "/"
                    + steps + " [" + String.format(Locale.ROOT, "%02d:%02d", done / 60_000, done / 1000 % 60) + "]");
            System.err.flush();
            if (done >= ms) {
                System.err.println();
                return;
            }
            Thread.sleep(Math.min(250, ms - done));
        }
    }

    /** vLLM and SGLang refuse a length above the model's own limit, in their words. */
    private void rejectAboveTheModelsLimit() {
        Long derived = options.derivedMax();
        if (derived == null || options.maxModelLen() == EngineOptions.AUTO || mml <= derived) {
            return;
        }
        switch (options.mode()) {
            case VLLM ->
                die(
                        1,
                        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
                        "  Value error, User-specified max_model_len (" + mml + ") is greater than the derived"
                                + " max_model_len (max_position_embeddings=" + derived + ".0 or model_max_length=None"
                                + " in model's config.json). To allow overriding this maximum, set the env var"
                                + " VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.");
            case SGLANG ->
                die(
                        1,
                        "ValueError: User-specified context_length (" + mml + ") is greater than the derived"
                                + " context_length (" + derived + "). This may lead to incorrect model outputs or"
                                + " CUDA errors. To allow overriding this maximum, set the env var"
                                + " SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1");
            default -> {
                // The other engines take any length and fail on memory instead.
            }
        }
    }

    /** vLLM's {@code --max-model-len auto}: its three Auto-fit lines. */
    private void autoFit() {
        if (options.maxModelLen() != EngineOptions.AUTO) {
            return;
        }
        long derived = options.derivedMax() != null ? options.derivedMax() : DEFAULT_DERIVED_MAX;
        if (options.capacity() < 16) {
            die(
                    1,
                    "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single"
                            + " token. Try increasing `gpu_memory_utilization`.");
        }
        if (mml < derived) {
            info("Auto-fit max_model_len: reduced from " + derived + " to " + mml + " to fit in available GPU memory ("
                    + gib(options.capacity()) + " GiB available for KV cache)");
        } else {
            info("Auto-fit max_model_len: full model context length " + derived + " fits in available GPU memory");
        }
    }

    /** The startup refusals: each engine's own words for "this context does not fit in KV memory". */
    private void refuseIfItDoesNotFit() {
        long limit = options.refusalLimit();
        boolean refused = options.refuseAt().contains(mml);
        boolean tooLong = mml > options.capacity();
        switch (options.mode()) {
            case VLLM -> {
                if (refused || tooLong) {
                    // Older builds say "models's" (sic); newer ones "model's", and name the CPU backend too.
                    String refusal = options.old()
                            ? "ValueError: To serve at least one request with the models's max seq len (" + mml
                                    + "), (" + gib(mml) + " GiB KV cache is needed, which is larger than the available"
                                    + " KV cache memory (" + gib(limit) + " GiB). Based on the available memory, the"
                                    + " estimated maximum model length is " + limit + ". Try increasing"
                                    + " `gpu_memory_utilization` or decreasing `max_model_len` when initializing the"
                                    + " engine."
                            : "ValueError: To serve at least one request with the model's max seq len (" + mml
                                    + "), (" + gib(mml) + " GiB KV cache is needed, which is larger than the available"
                                    + " KV cache memory (" + gib(limit) + " GiB). Based on the available memory, the"
                                    + " estimated maximum model length is " + limit + ". Try increasing"
                                    + " `gpu_memory_utilization` (which also controls CPU memory on the CPU backend)"
                                    + " or decreasing `max_model_len` when initializing the engine.";
                    die(
                            1,
                            "ERROR [core.py:708] EngineCore failed to start.",
                            "Traceback (most recent call last):",
                            refusal);
                }
            }
            case LLAMACPP -> {
                if (llama.kvTooLarge()) {
                    die(llama.exitCode(1), llama.kvFailure().toArray(String[]::new));
                }
            }
            case TGI -> {
                if (refused || tooLong) {
                    die(
                            1,
                            "Error: ArgumentValidation(\"`max_total_tokens` must be <= `max_batch_total_tokens`. Given: "
                                    + mml + " and " + limit + "\")");
                }
            }
            case SGLANG -> {
                if (refused) {
                    die(1, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.");
                }
            }
            case LMDEPLOY -> {
                if (refused) {
                    die(
                            1,
                            "RuntimeError: not enough KV cache blocks for session_len " + mml + " (the cache holds "
                                    + limit + " tokens)");
                }
            }
        }
    }

    private void logReady() {
        long cap = options.capacity();
        String url = "http://" + options.host() + ":" + options.port();
        switch (options.mode()) {
            case VLLM -> {
                String size = "GPU KV cache size: " + String.format(Locale.ROOT, "%,d", cap) + " tokens";
                String concurrency = String.format(
                        Locale.ROOT, "Maximum concurrency for %,d tokens per request: %.2fx", mml, (double) cap / mml);
                if (options.old()) {
                    info(size);
                    info(concurrency);
                } else {
                    // Newer builds print both on one line.
                    info(size + ", " + concurrency);
                }
                info("Starting vLLM API server 0 on " + url);
                info("Application startup complete.");
            }
            case SGLANG -> {
                info("KV Cache is allocated. #tokens: " + cap);
                info("max_total_num_tokens=" + cap + ", chunked_prefill_size=8192, max_prefill_tokens=16384,"
                        + " max_running_requests=" + maxRunning() + ", context_len=" + mml);
                info("The server is fired up and ready to roll!");
            }
            case LLAMACPP -> llama.ready(url).forEach(System.err::println);
            case LMDEPLOY -> info("Uvicorn running on " + url + " (Press CTRL+C to quit)");
            case TGI -> {
                info("Setting max batch total tokens to " + cap);
                info("Connected");
            }
        }
    }

    /** Not closed on an exception: the JDK server then drops the connection without ending the body cleanly. */
    private void handle(HttpExchange exchange) throws IOException {
        String route =
                exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath();
        switch (route) {
            case "GET /health" -> health(exchange);
            case "GET /v1/models" -> models(exchange);
            case "GET /get_server_info" -> serverInfo(exchange);
            case "GET /props" -> props(exchange);
            case "GET /metrics" -> metrics(exchange);
            case "POST /v1/completions" -> completions(exchange);
            case "POST /tokenize" -> tokenize(exchange);
            default -> send(exchange, 404, "{\"detail\":\"Not Found\"}");
        }
        exchange.close();
    }

    private void health(HttpExchange exchange) throws IOException {
        if (options.has(Fault.SLOW_HEALTH)) {
            trickle(exchange, 503, "application/json", "{\"error\":\"loading\"}".repeat(1000), 1500);
            return;
        }
        if (!ready) {
            unavailable(exchange);
        } else if (options.mode() == Mode.LLAMACPP) {
            send(exchange, 200, "{\"status\":\"ok\"}");
        } else {
            exchange.sendResponseHeaders(200, -1);
        }
    }

    private void unavailable(HttpExchange exchange) throws IOException {
        if (options.mode() == Mode.LLAMACPP) {
            send(
                    exchange,
                    503,
                    "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}");
        } else {
            exchange.sendResponseHeaders(503, -1);
        }
    }

    /** Sends the headers, then the body one byte at a time, {@code gapMs} apart. */
    private static void trickle(HttpExchange exchange, int status, String type, String body, long gapMs)
            throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, 0);
        OutputStream out = exchange.getResponseBody();
        out.flush();
        for (byte b : body.getBytes(StandardCharsets.UTF_8)) {
            out.write(b);
            out.flush();
            pause(gapMs);
        }
    }

    private boolean notServingYet() {
        return !ready || System.nanoTime() < servesFrom;
    }

    private void models(HttpExchange exchange) throws IOException {
        if (notServingYet()) {
            unavailable(exchange);
            return;
        }
        if (llama != null) {
            send(exchange, 200, llama.models());
            return;
        }
        send(
                exchange,
                200,
                json(object(
                        "object",
                        "list",
                        "data",
                        List.of(object(
                                "id", MODEL, "object", "model", "owned_by", "ctxprobe", "max_model_len", mml)))));
    }

    private void props(HttpExchange exchange) throws IOException {
        if (llama == null) {
            send(exchange, 404, "{\"detail\":\"Not Found\"}");
        } else if (!ready) {
            unavailable(exchange);
        } else {
            send(exchange, 200, llama.props());
        }
    }

    /** vLLM's cache gauge (newer builds add kv_cache_size_tokens) and SGLang's pool gauges, in Prometheus text. */
    private void metrics(HttpExchange exchange) throws IOException {
        long cap = options.capacity();
        String text;
        switch (options.mode()) {
            case VLLM -> {
                String tokens = options.old()
                        ? ""
                        : "kv_cache_size_tokens=\"" + cap + "\",kv_cache_max_concurrency=\""
                                + String.format(Locale.ROOT, "%.8f", (double) cap / mml) + "\",";
                text = "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                        + "# TYPE vllm:cache_config_info gauge\n"
                        + "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",gpu_memory_utilization=\"0.9\","
                        + tokens + "num_gpu_blocks=\"" + cap / 16 + "\"} 1.0\n"
                        + progressGauges();
            }
            case SGLANG ->
                text = "# TYPE sglang:max_total_num_tokens gauge\nsglang:max_total_num_tokens{model_name=\"" + MODEL
                        + "\"} " + cap + ".0\n# TYPE sglang:context_len gauge\nsglang:context_len{model_name=\""
                        + MODEL + "\"} " + mml + ".0\n";
            default -> {
                send(exchange, 404, "{\"detail\":\"Not Found\"}");
                return;
            }
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        exchange.sendResponseHeaders(200, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private void serverInfo(HttpExchange exchange) throws IOException {
        if (options.mode() != Mode.SGLANG) {
            send(exchange, 404, "{\"detail\":\"Not Found\"}");
            return;
        }
        send(
                exchange,
                200,
                json(object(
                        "model_path",
                        MODEL,
                        "context_length",
                        mml,
                        "max_total_num_tokens",
                        options.capacity(),
                        "max_req_input_len",
                        sglangMaxReqInputLen(),
                        "chunked_prefill_size",
                        8192)));
    }

    /**
     * SGLang's limit, as tp_worker.py computes it: {@code min(context_len - 1, max_total_num_tokens - 1) - 5}; a prompt
     * must be shorter than this, so the longest allowed is min(len, capacity) - 7.
     */
    private long sglangMaxReqInputLen() {
        return Math.min(mml - 1, options.capacity() - 1) - 5;
    }

    /** A byte tokenizer: byte b is id b + 3, BOS is 1 (as the embedded engine's vocabulary). */
    private static final int BYTE_IDS = 3;

    private static final int BOS = 1;
    private static final java.util.regex.Pattern NEEDLE = java.util.regex.Pattern.compile("The pass key is (\\d+)\\.");
    private static final String CUE = "What is the pass key? The pass key is";

    /** vLLM's and SGLang's {@code /tokenize} ({@code prompt}), or llama.cpp's ({@code content}), in its shape. */
    private void tokenize(HttpExchange exchange) throws IOException {
        if (notServingYet()) {
            unavailable(exchange);
            return;
        }
        JsonNode body = Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes());
        boolean vllm = body.has("prompt");
        String text = body.path(vllm ? "prompt" : "content").asString("");
        boolean special = vllm
                ? body.path("add_special_tokens").asBoolean(true)
                : body.path("add_special").asBoolean(false);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> ids = new ArrayList<>();
        if (special) {
            ids.add(BOS);
        }
        for (byte b : bytes) {
            ids.add((b & 0xff) + BYTE_IDS);
        }
        send(
                exchange,
                200,
                json(vllm ? object("count", ids.size(), "max_model_len", mml, "tokens", ids) : object("tokens", ids)));
    }

    /**
     * What the pass-key model answers to a prompt of ids that ends with the question, or null for any other prompt:
     * the key when it sees the needle, else words; noise above {@code --passkey-garble-above}. It sees the last {@code
     * --passkey-window} tokens, and with {@code --passkey-forget-middle} not the middle half.
     */
    private String passkeyAnswer(JsonNode prompt) {
        int n = prompt.size();
        StringBuilder seen = new StringBuilder(n);
        long from = options.passkeyWindow() > 0 ? Math.max(0, n - options.passkeyWindow()) : 0;
        for (int i = 0; i < n; i++) {
            boolean forgotten = options.passkeyForgetMiddle() && i >= n / 4 && i < n * 3L / 4;
            int id = prompt.get(i).asInt();
            boolean text = id >= BYTE_IDS && id < BYTE_IDS + 256;
            seen.append(i < from || forgotten || !text ? '\u0000' : (char) (id - BYTE_IDS));
        }
        if (!seen.toString().strip().endsWith(CUE)) {
            return null;
        }
        if (options.passkeyGarbleAbove() > 0 && n > options.passkeyGarbleAbove()) {
            return " #&%!@ *&^ %$#";
        }
        java.util.regex.Matcher m = NEEDLE.matcher(seen);
        return m.find() ? " " + m.group(1) + ". Remember it." : " I do not know.";
    }

    private void completions(HttpExchange exchange) throws IOException {
        if (notServingYet()) {
            unavailable(exchange);
            return;
        }
        JsonNode body;
        try {
            body = Json.MAPPER.readTree(exchange.getRequestBody().readAllBytes());
        } catch (tools.jackson.core.JacksonException e) {
            send(exchange, 400, badRequest("Invalid JSON body: " + e.getOriginalMessage()));
            return;
        }
        JsonNode prompt = body.path("prompt");
        long promptLen;
        if (prompt.isArray()) {
            promptLen = prompt.size();
        } else if (prompt.isString()) {
            promptLen = prompt.asString().getBytes(StandardCharsets.UTF_8).length;
        } else {
            send(exchange, 400, badRequest("prompt must be a list of token ids or a string"));
            return;
        }
        var request = new Request(
                promptLen,
                body.path("max_tokens").asLong(16),
                body.path("stream").asBoolean(false),
                body.path("stream_options").path("include_usage").asBoolean(false),
                prompt.isArray() ? passkeyAnswer(prompt) : null);
        boolean truncating = options.has(Fault.TRUNCATE);
        if (llama != null && !truncating) {
            llamaCompletion(exchange, request, prompt);
            return;
        }
        if (!truncating && rejected(exchange, request)) {
            return;
        }
        if (options.has(Fault.HANG_AT_CAPACITY)
                && request.promptLen() + request.maxTokens() > CAPACITY_HANG * options.capacity()) {
            // Admitted, never scheduled: no headers, no output, no error, no log line; it waits in the queue.
            held.put(heldIds.incrementAndGet(), new Held(System.nanoTime(), Double.POSITIVE_INFINITY, 0));
            pause(Double.MAX_VALUE);
        }
        long completionTokens = request.maxTokens();
        if (options.mode() == Mode.LMDEPLOY && promptLen + request.maxTokens() > mml) {
            completionTokens = 0;
        }
        answer(exchange, request, completionTokens, null);
    }

    /** llama.cpp: ids outside the vocabulary, a prompt that fills its slot (refused, or cut by context shift). */
    private void llamaCompletion(HttpExchange exchange, Request request, JsonNode prompt) throws IOException {
        if (prompt.isArray()) {
            for (JsonNode id : prompt) {
                if (!id.canConvertToLong() || id.asLong() < 0 || id.asLong() >= options.vocab()) {
                    send(exchange, 400, LlamaCpp.invalidTokens());
                    return;
                }
            }
        }
        long p = request.promptLen();
        Long kept = null;
        if (p >= llama.slotCtx) {
            if (!llama.contextShift) {
                if (request.stream() && llama.refusesInStream()) {
                    startStream(exchange);
                    OutputStream out = exchange.getResponseBody();
                    out.write(("error: " + llama.tooLong(p) + "\n\n").getBytes(StandardCharsets.UTF_8));
                    event(out, "[DONE]");
                } else {
                    send(exchange, 400, llama.tooLong(p));
                }
                return;
            }
            kept = llama.truncated(p);
            System.err.println(llama.truncationLine(kept));
        }
        long used = kept != null ? kept : p;
        answer(exchange, request, Math.max(1, Math.min(request.maxTokens(), llama.slotCtx - used)), kept);
    }

    /** A completion request as the engine understood it. */
    /** A completion request as the engine understood it; {@code answer} is the pass-key answer's text, or null. */
    private record Request(long promptLen, long maxTokens, boolean stream, boolean includeUsage, String answer) {

        /** The text of output token {@code i}: the answer comes whole in the first. */
        String token(long i) {
            return i == 0 && answer != null ? answer : "a";
        }
    }

    /** Answers an over-long request the way the imitated engine does; false when the request fits. */
    private boolean rejected(HttpExchange exchange, Request request) throws IOException {
        long p = request.promptLen();
        long m = request.maxTokens();
        switch (options.mode()) {
            case VLLM -> {
                if (p + m > mml) {
                    send(
                            exchange,
                            400,
                            badRequest(
                                    "This model's maximum context length is " + mml + " tokens. However, you requested "
                                            + (p + m) + " tokens (" + p + " in the messages, " + m + " in the"
                                            + " completion). Please reduce the length of the messages or completion."));
                    return true;
                }
            }
            case SGLANG -> {
                String message = null;
                long maxReqInputLen = sglangMaxReqInputLen();
                if (p >= maxReqInputLen) {
                    message = "Input length (" + p + " tokens) exceeds the maximum allowed length (" + maxReqInputLen
                            + " tokens). Use a shorter input or enable --allow-auto-truncate.";
                } else if (p + m >= mml) {
                    message = "Requested token count exceeds the model's maximum context length of " + mml
                            + " tokens. You requested a total of " + (p + m) + " tokens: " + p + " tokens from the"
                            + " input messages and " + m + " tokens for the completion. Please reduce the number of"
                            + " tokens in the input messages or the completion to fit within the limit.";
                }
                if (message != null) {
                    if (request.stream()) {
                        // SGLang has already answered 200 when its scheduler aborts a streamed request.
                        startStream(exchange);
                        OutputStream out = exchange.getResponseBody();
                        event(
                                out,
                                "{\"error\": {\"message\": " + Json.MAPPER.writeValueAsString(message)
                                        + ", \"type\": \"BadRequestError\", \"code\": 400}}");
                        event(out, "[DONE]");
                    } else {
                        send(exchange, 400, badRequest(message));
                    }
                    return true;
                }
            }
            case LLAMACPP -> {
                // Handled in completions(): llama.cpp refuses, or truncates with context shift on.
            }
            case TGI -> {
                if (p + m > mml) {
                    send(
                            exchange,
                            422,
                            json(object(
                                    "error",
                                    "Input validation error: inputs tokens + max_new_tokens must be <= " + mml
                                            + ". Given: " + p + " inputs tokens and " + m + " max_new_tokens",
                                    "error_type",
                                    "validation")));
                    return true;
                }
            }
            case LMDEPLOY -> {
                // LMDeploy answers an over-long prompt with an empty 200; see completions().
            }
        }
        return false;
    }

    /** Answers a request that is served; {@code reported} is the prompt length to report when the engine cut it. */
    private void answer(HttpExchange exchange, Request request, long completionTokens, Long reported)
            throws IOException {
        long p = request.promptLen();
        if (options.nnodes() > 1) {
            info("rank 0 of " + options.nnodes() + ": serving a completion of " + p + " prompt tokens");
        }
        double prefillMs = p * options.prefillUsPerToken() / 1e3 + options.prefillQuadraticNs() * p * p / 1e6;
        exchange.getResponseHeaders().set("X-Engine-Prefill-Ms", String.format(Locale.ROOT, "%.3f", prefillMs));
        long heldId = heldIds.incrementAndGet();
        held.put(heldId, new Held(System.nanoTime(), prefillMs, p));
        try {
            serve(exchange, request, completionTokens, reported, prefillMs);
            promptTokensTotal.addAndGet(p);
            generationTokensTotal.addAndGet(completionTokens);
        } finally {
            held.remove(heldId);
        }
    }

    private void serve(HttpExchange exchange, Request request, long completionTokens, Long reported, double prefillMs)
            throws IOException {
        long p = request.promptLen();
        if (options.has(Fault.CRASH_MID_REQUEST)) {
            System.err.println(
                    "RuntimeError: CUDA error: an illegal memory access was encountered (prefill of " + p + " tokens)");
            Runtime.getRuntime().halt(137);
        }
        if (options.has(Fault.CONTROL_BYTES) && p >= 1500) {
            byte[] body = ("upstream failed " + CONTROL).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(500, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
            return;
        }
        if (options.has(Fault.CONTROL_BYTES)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            event(
                    out,
                    "{\"error\": {\"message\": " + json("event said " + CONTROL)
                            + ", \"type\": \"InternalServerError\", \"code\": 500}}");
            event(out, "[DONE]");
            return;
        }
        if (streamFault(exchange)) {
            return;
        }
        long reportedPrompt = reported != null ? reported : p;
        if (options.has(Fault.TRUNCATE)) {
            reportedPrompt = Math.min(p, options.capacity());
        } else if (options.has(Fault.BOS)) {
            reportedPrompt = p + 1;
        }
        String id = "cmpl-" + requestIds.incrementAndGet();
        long created = System.currentTimeMillis() / 1000;
        Map<String, Object> usage = object(
                "prompt_tokens",
                reportedPrompt,
                "completion_tokens",
                completionTokens,
                "total_tokens",
                reportedPrompt + completionTokens);
        long cached = Math.max(0, p - 16);
        // llama.cpp puts its timings beside the usage, in the last event.
        Map<String, Object> timings = null;
        if (options.has(Fault.PREFIX_CACHE_HIT) && options.mode() != Mode.LLAMACPP) {
            usage.put("prompt_tokens_details", object("cached_tokens", cached));
        } else if (options.has(Fault.PREFIX_CACHE_HIT)) {
            timings = object("cache_n", cached);
        }
        if (!request.stream()) {
            pause(prefillMs + Math.max(0, completionTokens - 1) * options.itlMs());
            send(
                    exchange,
                    200,
                    json(chunk(
                            id,
                            created,
                            List.of(choice(
                                    completionTokens == 0
                                            ? ""
                                            : request.token(0) + "a".repeat((int) completionTokens - 1),
                                    "length")),
                            usage)));
            return;
        }
        startStream(exchange);
        OutputStream out = exchange.getResponseBody();
        if (pool != null) {
            pooled(out, request, p, prefillMs, completionTokens, id, created);
        } else {
            pause(prefillMs);
            if (completionTokens == 0) {
                event(out, json(chunk(id, created, List.of(choice("", "length")), null)));
            }
            for (long i = 0; i < completionTokens; i++) {
                if (i > 0) {
                    pause(options.itlMs());
                }
                String finish = i == completionTokens - 1 ? "length" : null;
                event(out, json(chunk(id, created, List.of(choice(request.token(i), finish)), null)));
            }
        }
        if (request.includeUsage()) {
            Map<String, Object> last = chunk(id, created, List.of(), usage);
            if (timings != null) {
                last.put("timings", timings);
            }
            event(out, json(last));
        }
        event(out, "[DONE]");
    }

    /**
     * Streams a request's tokens through the shared KV pool: admitted in arrival order when it fits (queued until
     * then), and with {@code --preempt} preempted when a decode step finds the pool full, as vLLM's scheduler does,
     * with its warning; its prefill is then computed again once it is admitted again.
     */
    private void pooled(
            OutputStream out, Request request, long p, double prefillMs, long completionTokens, String id, long created)
            throws IOException {
        // SGLang reserves the whole output, its max_new_tokens clipped so that a request alone fits its pool.
        long held = pool.preempts() ? p : Math.min(p + completionTokens, pool.tokens());
        admit(held);
        try {
            pause(prefillMs);
            for (long i = 0; i < completionTokens; i++) {
                if (i > 0) {
                    pause(options.itlMs());
                    if (pool.preempts()) {
                        if (!pool.growOrPreempt(held)) {
                            System.out.println("WARNING Sequence group " + id + " is preempted by"
                                    + " PreemptionMode.RECOMPUTE mode because there is not enough KV cache space."
                                    + " This can affect the end-to-end performance. Increase gpu_memory_utilization"
                                    + " or tensor_parallel_size to provide more KV cache memory."
                                    + " total_num_cumulative_preemption=" + pool.preemptions());
                            admit(held + 1);
                            held++;
                            pause(prefillMs);
                        } else {
                            held++;
                        }
                    }
                }
                String finish = i == completionTokens - 1 ? "length" : null;
                event(out, json(chunk(id, created, List.of(choice(request.token(i), finish)), null)));
            }
        } finally {
            pool.release(held, false);
        }
    }

    private void admit(long need) {
        try {
            pool.admit(need);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while queued", e);
        }
    }

    /** Applies a stream-breaking fault; true when it has taken over the response. */
    private boolean streamFault(HttpExchange exchange) throws IOException {
        if (options.has(Fault.ENDLESS_STREAM) || options.has(Fault.SLOW_ENDLESS_STREAM)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            String event = "data: " + json(chunk("cmpl-endless", 0, List.of(choice("a", null)), null)) + "\n\n";
            byte[] bytes = (options.has(Fault.SLOW_ENDLESS_STREAM) ? event : event.repeat(64))
                    .getBytes(StandardCharsets.UTF_8);
            while (true) {
                out.write(bytes);
                out.flush();
                if (options.has(Fault.SLOW_ENDLESS_STREAM)) {
                    pause(100);
                }
            }
        }
        if (options.has(Fault.ENDLESS_JSON)) {
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write("{\"choices\": [{\"text\": \"".getBytes(StandardCharsets.UTF_8));
            byte[] text = "a".repeat(64 * 1024).getBytes(StandardCharsets.UTF_8);
            while (true) {
                out.write(text);
            }
        }
        if (options.has(Fault.OLD_ERROR_EVENT)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            event(
                    out,
                    badRequest("This model's maximum context length is " + (mml / 2)
                            + " tokens. However, you requested " + mml + " tokens. Please reduce"
                            + " the length of the messages or completion."));
            event(out, "[DONE]");
            return true;
        }
        if (options.has(Fault.HANG_AFTER_HEADERS)) {
            startStream(exchange);
            pause(Double.MAX_VALUE);
            return true;
        }
        if (options.has(Fault.GARBAGE_STREAM)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            out.write("<html><body>502 Bad Gateway</body></html>\n\u0000\u0001garbage"
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return true;
        }
        if (options.has(Fault.ERROR_EVENT)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            event(
                    out,
                    "{\"error\": {\"message\": \"Internal server error: the scheduler failed\", \"type\":"
                            + " \"InternalServerError\", \"code\": 500}}");
            event(out, "[DONE]");
            return true;
        }
        if (options.has(Fault.CLOSE_MID_STREAM)) {
            startStream(exchange);
            OutputStream out = exchange.getResponseBody();
            out.write("data: {\"id\":\"cmpl-".getBytes(StandardCharsets.UTF_8));
            out.flush();
            throw new IOException("close-mid-stream fault: dropping the connection after a partial event");
        }
        return false;
    }

    /** Sends the SSE headers now, so the client sees them before prefill, as from uvicorn. */
    private static void startStream(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
        // The JDK server buffers the headers until the body is flushed.
        exchange.getResponseBody().flush();
    }

    private static void event(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static Map<String, Object> chunk(
            String id, long created, List<Map<String, Object>> choices, Map<String, Object> usage) {
        Map<String, Object> chunk =
                object("id", id, "object", "text_completion", "created", created, "model", MODEL, "choices", choices);
        if (usage != null) {
            chunk.put("usage", usage);
        }
        return chunk;
    }

    private static Map<String, Object> choice(String text, String finishReason) {
        return object("index", 0, "text", text, "logprobs", null, "finish_reason", finishReason);
    }

    /** The OpenAI-style error body that vLLM and SGLang send with HTTP 400. */
    private static String badRequest(String message) {
        return json(
                object("object", "error", "message", message, "type", "BadRequestError", "param", null, "code", 400));
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    /** Keys in insertion order, null values kept: the JSON shape the engines write. */
    private static Map<String, Object> object(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    private static String json(Object value) {
        return Json.MAPPER.writeValueAsString(value);
    }

    private static void pause(double ms) {
        if (ms <= 0) {
            return;
        }
        try {
            Thread.sleep(ms >= Long.MAX_VALUE / 1e6 ? Duration.ofDays(365) : Duration.ofNanos((long) (ms * 1e6)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while simulating work", e);
        }
    }

    private static String gib(long tokens) {
        return String.format(Locale.ROOT, "%.2f", tokens * KV_BYTES_PER_TOKEN / (1L << 30));
    }

    private static void info(String line) {
        System.out.println("INFO " + line);
    }

    /**
     * vLLM's request gauges and counters: a request in its prefill is running and fills the KV cache as its prefill
     * proceeds; one admitted and never scheduled waits and fills nothing. With a KV pool, the pool's own state: the
     * requests it runs, those queued for admission (a preempted one among them), the cells used, its preemptions.
     */
    private String progressGauges() {
        long now = System.nanoTime();
        int running = 0;
        int waiting = 0;
        double tokens = 0;
        for (Held h : held.values()) {
            if (Double.isInfinite(h.prefillMs())) {
                waiting++;
            } else {
                running++;
                double done = h.prefillMs() <= 0 ? 1 : Math.min(1, (now - h.startNanos()) / 1e6 / h.prefillMs());
                tokens += done * h.promptLen();
            }
        }
        double usage = Math.min(1, tokens / options.capacity());
        long preemptions = 0;
        if (pool != null) {
            running = pool.running();
            waiting += (int) pool.waiting();
            usage = (double) pool.used() / pool.tokens();
            preemptions = pool.preemptions();
        }
        if (options.has(Fault.UNDERCOUNT_RUNNING)) {
            running = Math.max(0, running - 1);
        }
        String labels = "{model_name=\"" + MODEL + "\"}";
        return "vllm:num_requests_running" + labels + " " + running + ".0\n"
                + "vllm:num_requests_waiting" + labels + " " + waiting + ".0\n"
                + "vllm:kv_cache_usage_perc" + labels + " "
                + String.format(Locale.ROOT, "%.9f", usage) + "\n"
                + "vllm:num_preemptions_total" + labels + " " + preemptions + ".0\n"
                + "vllm:prompt_tokens_total" + labels + " " + promptTokensTotal.get() + ".0\n"
                + "vllm:generation_tokens_total" + labels + " " + generationTokensTotal.get() + ".0\n";
    }

    /** Waits without end, printing nothing and using no CPU: only a signal ends it. */
    private static void hang() throws InterruptedException {
        Thread.sleep(Long.MAX_VALUE);
    }

    /** Prints the lines to stderr, as the engines print their fatal errors, and exits with the code. */
    private static void die(int code, String... lines) {
        for (String line : lines) {
            System.err.println(line);
        }
        System.exit(code);
    }

    /** Loaded on the first request, not at startup: the engine is launched hundreds of times by the tests. */
    private static final class Json {
        static final JsonMapper MAPPER = JsonMapper.builder().build();
    }
}
