package dev.ctxprobe.testengine;

import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Locale;
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
        long logMib) {

    /** {@code --max-model-len auto}: the engine fits its context to memory. */
    static final long AUTO = -1;

    /** Capacity when none is given: large enough that every length a test asks for fits. */
    static final long HUGE_CAPACITY = 1_000_000_000L;

    static final String USAGE = "usage: TestEngine --port N [--host H] [--mode vllm|sglang|llamacpp|lmdeploy|tgi]"
            + " [--max-model-len N | --context-length N | -c N | --session-len N | --max-total-tokens N]"
            + " [--capacity N] [--startup-ms N] [--prefill-us-per-token D] [--prefill-quadratic-ns D]"
            + " [--itl-ms D] [--refuse-at L1,L2,...] [--fault NAME]... [--build b11669|b4748|new|old]"
            + " [--derived-max N] [-np N] [--kv-unified | --no-kv-unified] [--context-shift | --no-context-shift]"
            + " [--n-ctx-train N] [--vocab N] [--resident-mb N] [--node-rank R --nnodes N --dist-init-addr HOST:PORT]"
            + " [--hold-while FILE]"
            + " [--model-config FILE --device-memory-gib G [--weights-gib W] [--gpu-memory-utilization F |"
            + " --mem-fraction-static F] [--tensor-parallel-size N | --tp-size N] [--kv-cache-dtype D]"
            + " [--block-size N | --page-size N]] [--not-ready-ms N] [--log-mib N]";

    /** Options that take no value. */
    private static final Set<String> FLAGS =
            Set.of("--kv-unified", "--no-kv-unified", "--context-shift", "--no-context-shift");

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
        CHATTY_STARTUP;

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
                logMib);
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
