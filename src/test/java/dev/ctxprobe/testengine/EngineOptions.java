package dev.ctxprobe.testengine;

import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The test engine's command line: which engine it imitates (and which version of its texts), its limits, its timing
 * and its faults.
 *
 * @param maxModelLen the context asked for; {@link #AUTO} for vLLM's {@code --max-model-len auto}
 * @param build the engine version whose texts to speak: {@code b11669} or {@code b4748} for llama.cpp, {@code new}
 *     or {@code old} for vLLM's wording
 * @param derivedMax the model's own limit (vLLM's derived max_model_len, SGLang's derived context_length), null for
 *     none; vLLM's {@code auto} fits below it (1,048,576 when none is given)
 * @param parallel llama.cpp's {@code -np}, null when not given
 * @param kvUnified llama.cpp's {@code --kv-unified} / {@code --no-kv-unified}, null when not given
 * @param contextShift llama.cpp's {@code --context-shift} / {@code --no-context-shift}, null when not given
 * @param trainContext the model's training context (llama.cpp's n_ctx_train)
 * @param vocab the model's vocabulary: ids at or above it are invalid tokens
 * @param passkeyWindow the pass-key model sees only the last this many prompt tokens; 0 for all of them
 * @param passkeyForgetMiddle the pass-key model forgets the middle half of a prompt
 * @param passkeyGarbleAbove the pass-key model answers noise to a prompt longer than this; 0 for never
 * @param kvPool a KV pool of this many tokens shared by the requests in flight (admission, queueing, preemption:
 *     {@link KvPool}); 0 for none, every request served at once as before; {@link #POOL_IS_CAPACITY} ({@code
 *     --kv-pool capacity}) for the capacity the engine states, as the real engines' one pool
 * @param maxRunning requests generated together at most (vLLM's {@code --max-num-seqs}, SGLang's {@code
 *     --max-running-requests}); 0 for no cap
 * @param preempt vLLM's admission: a request is admitted for its prompt and grows block by block, and the newest
 *     is preempted (its KV dropped, its prefill done again later) when the pool runs out; without it, SGLang's: a
 *     request is admitted only with room for its whole output
 */
record EngineOptions(
        String host,
        int port,
        Mode mode,
        long maxModelLen,
        long capacity,
        long startupMs,
        double prefillUsPerToken,
        double prefillQuadraticNs,
        double itlMs,
        Set<Long> refuseAt,
        Set<Fault> faults,
        String build,
        Long derivedMax,
        Integer parallel,
        Boolean kvUnified,
        Boolean contextShift,
        long trainContext,
        int vocab,
        int nodeRank,
        int nnodes,
        String distInitAddr,
        long residentMb,
        String holdWhile,
        long notReadyMs,
        long logMib,
        long passkeyWindow,
        boolean passkeyForgetMiddle,
        long passkeyGarbleAbove,
        Map<String, String> keys,
        String keysTo,
        long kvPool,
        int maxRunning,
        boolean preempt) {

    /** {@code --kv-pool capacity}: the pool is the KV capacity the engine states (given or sized from a model). */
    static final long POOL_IS_CAPACITY = -1;

    /** {@code --max-model-len auto}: the engine fits its context to memory. */
    static final long AUTO = -1;

    /** Capacity when none is given: large enough that every length a test asks for fits. */
    static final long HUGE_CAPACITY = 1_000_000_000L;

    static final String USAGE = "usage: TestEngine --port N [--host H] [--mode vllm|sglang|llamacpp|lmdeploy|tgi]"
            + " [--max-model-len N | --context-length N | -c N | --session-len N | --max-total-tokens N]"
            + " [--kv-pool N|capacity [--max-num-seqs N | --max-running-requests N] [--preempt]] [--capacity N] [--startup-ms N] [--prefill-us-per-token D] [--prefill-quadratic-ns D]"
            + " [--itl-ms D] [--refuse-at L1,L2,...] [--fault NAME]... [--build b11669|b4748|new|old]"
            + " [--derived-max N] [-np N] [--kv-unified | --no-kv-unified] [--context-shift | --no-context-shift]"
            + " [--n-ctx-train N] [--vocab N] [--resident-mb N] [--node-rank R --nnodes N --dist-init-addr HOST:PORT]"
            + " [--hold-while FILE] [--api-key K] [--hf-token K] [--token K] [--auth-secret K] [--keys-to FILE]"
            + " [--model-config FILE --device-memory-gib G [--weights-gib W] [--gpu-memory-utilization F |"
            + " --mem-fraction-static F] [--tensor-parallel-size N | --tp-size N] [--kv-cache-dtype D]"
            + " [--block-size N | --page-size N]] [--not-ready-ms N] [--log-mib N]"
            + " [--passkey-window N] [--passkey-forget-middle] [--passkey-garble-above N]";

    /** Options that take no value. */
    private static final Set<String> FLAGS = Set.of(
            "--kv-unified",
            "--no-kv-unified",
            "--context-shift",
            "--no-context-shift",
            "--passkey-forget-middle",
            "--preempt");

    /** Which real engine's texts, readiness and over-limit behaviour the test engine imitates. */
    enum Mode {
        VLLM,
        SGLANG,
        LLAMACPP,
        LMDEPLOY,
        TGI;

        /** Engines whose HTTP port answers (503) while the model loads; the others bind only when ready. */
        boolean bindsWhileLoading() {
            return this == SGLANG || this == LLAMACPP;
        }
    }

    /** A misbehaviour to imitate; several may be combined. */
    enum Fault {
        EXIT_AT_ONCE,
        NEVER_READY,
        CRASH_MID_REQUEST,
        HANG_AFTER_HEADERS,
        GARBAGE_STREAM,
        ERROR_EVENT,
        CLOSE_MID_STREAM,
        IGNORE_SIGTERM,
        LEAVE_CHILD,
        /** A process in a session of its own that outlives the engine, beyond any group signal. */
        LEAVE_ORPHAN,
        OOM_STARTUP,
        BAD_ARGS,
        TRUNCATE,
        BOS,
        /** vLLM's hang: a request that needs the last half percent of the KV cache is admitted, never scheduled. */
        HANG_AT_CAPACITY,
        /** /health answers 503 with a body of one byte every 1.5 s, and never becomes ready. */
        SLOW_HEALTH,
        /** /health says 200 at once, while /v1/models and completions answer 503 for --not-ready-ms more. */
        HEALTH_EARLY,
        /** A 200 stream of choice events as fast as the socket takes them, never ending. */
        ENDLESS_STREAM,
        /** A 200 stream of one choice event every 100 ms, never ending. */
        SLOW_ENDLESS_STREAM,
        /** A 200 application/json body that never ends. */
        ENDLESS_JSON,
        /** A stream error in vLLM's older shape: {"object": "error", ...} with the context-length refusal. */
        OLD_ERROR_EVENT,
        /** A child that moves to a process group of its own (setpgid), as job control does. */
        SETPGID_CHILD,
        /** A daemon that double-forks with setsid: its own session, re-parented away from the engine. */
        SETSID_DAEMON,
        /** Logs its whole environment in the line of a fatal error and exits 1, as a crashing wrapper might. */
        LEAK_ENV,
        /** Logs --log-mib MiB of chatter between its first line and its capacity line. */
        CHATTY_STARTUP,
        /**
         * Reports all but 16 prompt tokens as served from its prefix cache, where the engine reports it: llama.cpp's
         * {@code timings.cache_n}, vLLM's and SGLang's {@code usage.prompt_tokens_details.cached_tokens}.
         */
        PREFIX_CACHE_HIT,
        /**
         * Terminal control bytes (ESC, an OSC window title, BEL, NUL, a clear-screen CSI) in a log line while it
         * loads, in an SSE error event for prompts under 1500 tokens and in a plain 500 body for longer ones.
         */
        CONTROL_BYTES,
        /**
         * A tensor-parallel worker's out-of-memory traceback (vLLM's words), then nothing: the API process neither
         * serves nor exits, as when the other workers wait in a collective for the dead one.
         */
        FATAL_THEN_HANG,
        /** A loading line, then a hang with no log line and no CPU, never ready and never exiting. */
        SILENT_STALL,
        /** vLLM's /metrics shows one request fewer running than it runs: an engine's count that lies. */
        UNDERCOUNT_RUNNING;

        static Fault parse(String name) {
            try {
                return valueOf(name.toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown fault '" + name + "'", e);
            }
        }
    }

    boolean has(Fault fault) {
        return faults.contains(fault);
    }

    /** True for the texts of older versions: llama.cpp b4748 (February 2025), vLLM's old wording. */
    boolean old() {
        return build.equals("b4748") || build.equals("old");
    }

    /** The limit a refusal names: the capacity when too small, else just under the refused length. */
    long refusalLimit() {
        return capacity < maxModelLen ? capacity : maxModelLen - 1;
    }

    /** Parses the arguments; throws IllegalArgumentException with an argparse-like message. */
    static EngineOptions parse(String... args) {
        String host = "127.0.0.1";
        Integer port = null;
        Mode mode = Mode.VLLM;
        long maxModelLen = 32_768;
        long capacity = HUGE_CAPACITY;
        long startupMs = 0;
        double prefillUs = 2.0;
        double prefillQuadraticNs = 0.0;
        double itlMs = 0.0;
        Set<Long> refuseAt = new HashSet<>();
        Set<Fault> faults = EnumSet.noneOf(Fault.class);
        int nodeRank = 0;
        int nnodes = 1;
        String distInitAddr = null;
        long residentMb = 0;
        String holdWhile = null;
        String build = null;
        Long derivedMax = null;
        Integer parallel = null;
        Boolean kvUnified = null;
        Boolean contextShift = null;
        long trainContext = 1_048_576;
        int vocab = 32_000;
        ModelSizing sizing = new ModelSizing();
        long notReadyMs = 2000;
        long logMib = 64;
        long passkeyWindow = 0;
        boolean passkeyForgetMiddle = false;
        long passkeyGarbleAbove = 0;
        Map<String, String> keys = new java.util.TreeMap<>();
        String keysTo = null;
        long kvPool = 0;
        int maxRunning = 0;
        boolean preempt = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = arg;
            String value;
            int eq = arg.indexOf('=');
            if (FLAGS.contains(arg)) {
                switch (arg) {
                    case "--kv-unified" -> kvUnified = true;
                    case "--no-kv-unified" -> kvUnified = false;
                    case "--context-shift" -> contextShift = true;
                    case "--passkey-forget-middle" -> passkeyForgetMiddle = true;
                    case "--preempt" -> preempt = true;
                    default -> contextShift = false;
                }
                continue;
            } else if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException("argument " + arg + ": expected one argument");
            }
            switch (name) {
                case "--host" -> host = value;
                case "--port" -> port = (int) number(name, value);
                case "--mode" -> mode = mode(value);
                case "--max-model-len", "--context-length", "-c", "--ctx-size", "--session-len", "--max-total-tokens" ->
                    maxModelLen = value.equals("auto") || value.equals("-1") ? AUTO : number(name, value);
                case "--build" -> build = value;
                case "--derived-max" -> derivedMax = number(name, value);
                case "-np", "--parallel" -> parallel = (int) number(name, value);
                case "--n-ctx-train" -> trainContext = number(name, value);
                case "--vocab" -> vocab = (int) number(name, value);
                case "--capacity" -> capacity = number(name, value);
                case "--startup-ms" -> startupMs = number(name, value);
                case "--prefill-us-per-token" -> prefillUs = decimal(name, value);
                case "--prefill-quadratic-ns" -> prefillQuadraticNs = decimal(name, value);
                case "--itl-ms" -> itlMs = decimal(name, value);
                case "--refuse-at" -> {
                    for (String part : value.split(",")) {
                        refuseAt.add(number(name, part.strip()));
                    }
                }
                case "--fault" -> faults.add(Fault.parse(value));
                case "--not-ready-ms" -> notReadyMs = number(name, value);
                case "--log-mib" -> logMib = number(name, value);
                case "--node-rank" -> nodeRank = (int) number(name, value);
                case "--nnodes" -> nnodes = (int) number(name, value);
                case "--dist-init-addr" -> distInitAddr = value;
                case "--resident-mb" -> residentMb = number(name, value);
                case "--hold-while" -> holdWhile = value;
                case "--passkey-window" -> passkeyWindow = number(name, value);
                case "--passkey-garble-above" -> passkeyGarbleAbove = number(name, value);
                case "--keys-to" -> keysTo = value;
                case "--kv-pool" -> kvPool = value.equals("capacity") ? POOL_IS_CAPACITY : number(name, value);
                case "--max-num-seqs", "--max-running-requests" -> maxRunning = (int) number(name, value);
                case "--api-key", "--hf-token", "--token", "--auth-secret" -> keys.put(name, value);
                default -> {
                    if (!ModelSizing.OPTIONS.contains(name)) {
                        throw new IllegalArgumentException("unrecognized argument: " + arg);
                    }
                    sizing.put(name, value);
                }
            }
        }
        if (port == null) {
            throw new IllegalArgumentException("the following arguments are required: --port");
        }
        if (sizing.given()) {
            capacity = sizing.capacity(mode);
            if (derivedMax == null) {
                derivedMax = sizing.maxPositions();
            }
        }
        if (nnodes > 1 && (distInitAddr == null || !distInitAddr.matches(".+:\\d+"))) {
            throw new IllegalArgumentException("--nnodes above 1 needs --dist-init-addr HOST:PORT");
        }
        if (nodeRank < 0 || nodeRank >= nnodes) {
            throw new IllegalArgumentException("--node-rank " + nodeRank + " is outside 0.." + (nnodes - 1));
        }
        if (maxModelLen == AUTO && mode != Mode.VLLM) {
            throw new IllegalArgumentException("argument --max-model-len: invalid int value: 'auto'");
        }
        if (build == null) {
            build = mode == Mode.LLAMACPP ? "b11669" : "old";
        }
        if (!Set.of("b11669", "b4748", "new", "old").contains(build)) {
            throw new IllegalArgumentException("argument --build: invalid choice: '" + build + "'");
        }
        return new EngineOptions(
                host,
                port,
                mode,
                maxModelLen,
                capacity,
                startupMs,
                prefillUs,
                prefillQuadraticNs,
                itlMs,
                Set.copyOf(refuseAt),
                Collections.unmodifiableSet(faults),
                build,
                derivedMax,
                parallel,
                kvUnified,
                contextShift,
                trainContext,
                vocab,
                nodeRank,
                nnodes,
                distInitAddr,
                residentMb,
                holdWhile,
                notReadyMs,
                logMib,
                passkeyWindow,
                passkeyForgetMiddle,
                passkeyGarbleAbove,
                Map.copyOf(keys),
                keysTo,
                kvPool,
                maxRunning,
                preempt);
    }

    private static Mode mode(String value) {
        try {
            return Mode.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("argument --mode: invalid choice: '" + value + "'", e);
        }
    }

    private static long number(String name, String value) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("argument " + name + ": invalid int value: '" + value + "'", e);
        }
    }

    private static double decimal(String name, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("argument " + name + ": invalid float value: '" + value + "'", e);
        }
    }
}
