package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.Experiment.Frontier;
import dev.ctxprobe.experiment.Experiment.HardwareSpec;
import dev.ctxprobe.experiment.Experiment.Load;
import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.experiment.Experiment.Strategy;
import dev.ctxprobe.experiment.Experiment.Sweep;
import dev.ctxprobe.experiment.Experiment.Timeouts;
import dev.ctxprobe.experiment.ExperimentFile.LoadFile;
import dev.ctxprobe.experiment.ExperimentFile.SweepFile;
import dev.ctxprobe.experiment.ExperimentFile.TimeoutsFile;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The semantic checks of a parsed experiment file (docs/experiment-file.md): names, ranges, the load, the sweep's
 * strategy rules, timeouts, hardware and limits; each backend's own by {@link BackendChecks}.
 */
final class ExperimentChecks {
    private static final long MAX_LENGTH = Defaults.MAX_MODEL_LEN;
    private static final long MAX_OUTPUT_LEN = 1 << 20;
    private static final long MAX_PROMPTS = 100_000;
    private static final long MAX_CONCURRENCY = 10_000;
    private static final long MAX_WARMUP = 1_000;
    private static final double MAX_RATE = 1_000_000;
    private static final long MAX_LAUNCHES = 1_000;
    private static final long MAX_DEVICES = 4_096;
    private static final long MAX_GIB = 1 << 20;
    private static final Duration MAX_WAIT = Duration.ofDays(7);

    private final ValueChecks values;
    private final BackendChecks backendChecks;

    ExperimentChecks(ValueChecks values, BackendChecks backendChecks) {
        this.values = values;
        this.backendChecks = backendChecks;
    }

    Experiment check(ExperimentFile raw) throws ExperimentError {
        String name = values.required(raw.experiment(), "experiment", "name the experiment, e.g. 'experiment: my_run'");
        if (!ValueChecks.SAFE_NAME.matcher(name).matches()) {
            throw error(
                    "experiment",
                    "the experiment name '" + name + "' becomes a folder name: use letters, digits, '.', '_' and '-'");
        }
        if (name.length() > ValueChecks.NAME_MAX) {
            throw error(
                    "experiment",
                    "the experiment name is " + name.length() + " characters long; it becomes a folder name, which"
                            + " holds at most " + ValueChecks.NAME_MAX + ": shorten it");
        }
        Map<String, String> env = values.checkEnv("env", raw.env());
        Map<String, Object> vars = values.checkVars("vars", raw.vars());
        long pad = raw.contextPad() == null ? Defaults.CONTEXT_PAD : raw.contextPad();
        if (pad < 0 || pad >= MAX_LENGTH) {
            throw error(
                    "context_pad",
                    "context_pad must be 0 or more and below " + MAX_LENGTH
                            + " (tokens added to the target for max_model_len; " + Defaults.CONTEXT_PAD
                            + " covers every engine)");
        }
        Load load = checkLoad(raw.load());
        Sweep sweep = checkSweep(raw.sweep(), pad, load);
        Timeouts timeouts = checkTimeouts(raw.timeouts());
        HardwareSpec hardware = checkHardware(raw.hardware());
        Map<String, Object> launcher = backendChecks.launcherMap("launcher", raw.launcher());
        Check check = backendChecks.check("check", raw.check(), null);
        Experiment.Limits limits = checkLimits(raw.limits());
        Map<String, List<String>> matrix = new MatrixChecks(values).check("matrix", raw.matrix());
        List<Backend> backends =
                backendChecks.checkBackends(raw.backends(), env, vars, timeouts, launcher, check, matrix);
        checkOutputForAnswer(load, backends);
        checkCells(raw, backends, limits);
        checkRanges(raw, load, sweep, timeouts, backends);
        List<String> secrets = checkNames("secrets", raw.secrets(), false);
        List<String> passEnv = checkNames("pass_env", raw.passEnv(), true);
        return new Experiment(
                values.file(),
                name,
                raw.description() == null ? "" : raw.description(),
                raw.model() == null ? "" : raw.model(),
                hardware,
                env,
                vars,
                pad,
                load,
                sweep,
                timeouts,
                backends,
                values.modelConfig("model_config", raw.modelConfig()),
                values.gib("weights_gib", raw.weightsGib(), "the model's weights, e.g. 'weights_gib: 152.5'"),
                secrets,
                passEnv,
                limits,
                checkSecretFlags(raw.secretFlags()),
                backendChecks.fromEnvironment());
    }

    /** The most requests a probe of the capacity map sends at once. */
    static final int MAX_CONCURRENT = Experiment.Sweep.MAX_CONCURRENT;
    /** The shortest output that shows a pause in a request's decode (docs/search.md#held-at-once). */
    static final int MIN_CONCURRENT_OUTPUT = 4;

    private ExperimentError error(String path, String problem) {
        return values.error(path, problem);
    }

    // A key is read from the output's start: too few output tokens cut it (docs/experiment-file.md#check).
    private void checkOutputForAnswer(Load load, List<Backend> backends) throws ExperimentError {
        if (backends.stream().anyMatch(b -> b.check() != null) && load.outputLen() < Check.MIN_OUTPUT_LEN) {
            throw error(
                    "load.output_len",
                    "a pass key is read from the first output tokens, and " + load.outputLen() + " cannot hold a"
                            + " five-digit key: set load.output_len to " + Check.MIN_OUTPUT_LEN + " or more");
        }
    }

    /**
     * Matrices multiply: a few parameters of a few values each make more cells than anyone meant to run, each a
     * whole search. Beyond {@code limits.max_cells} the file must say it means it.
     */
    private void checkCells(ExperimentFile raw, List<Backend> backends, Experiment.Limits limits)
            throws ExperimentError {
        long cells = backends.stream().filter(b -> !b.params().isEmpty()).count();
        if (cells <= limits.maxCells()) {
            return;
        }
        String at = "matrix";
        if (raw.matrix() == null) {
            for (int i = 0; i < raw.backends().size(); i++) {
                if (raw.backends().get(i).matrix() != null) {
                    at = "backends[" + i + "].matrix";
                    break;
                }
            }
        }
        throw error(
                at,
                String.format(
                        Locale.ROOT,
                        "the matrix makes %,d cells, more than limits.max_cells (%,d), and each cell is a search"
                                + " of its own: raise limits.max_cells to %,d if you mean it, or give fewer values",
                        cells,
                        limits.maxCells(),
                        cells));
    }

    /**
     * The upper bounds of every number the file gives: beyond them a value is a typo (1e8 streams, a startup
     * limit of 1e300 s) that would exhaust memory or wait forever rather than measure anything.
     */
    private void checkRanges(ExperimentFile raw, Load load, Sweep sweep, Timeouts timeouts, List<Backend> backends)
            throws ExperimentError {
        atMost("load.output_len", load.outputLen(), MAX_OUTPUT_LEN, "tokens generated per request");
        atMost("load.num_prompts", load.numPrompts(), MAX_PROMPTS, "measured requests per step");
        atMost("load.max_concurrency", load.maxConcurrency(), MAX_CONCURRENCY, "requests in flight at once");
        atMost("load.warmup", load.warmup(), MAX_WARMUP, "unmeasured requests before each step");
        if (!Double.isInfinite(load.requestRate()) && load.requestRate() > MAX_RATE) {
            throw error(
                    "load.request_rate",
                    String.format(
                            Locale.ROOT,
                            "load.request_rate is at most %,d requests per second; write \"inf\" to send all at"
                                    + " once",
                            (long) MAX_RATE));
        }
        if (sweep.frontier() != null) {
            atMost("sweep.frontier.max_launches", sweep.frontier().maxLaunches(), MAX_LAUNCHES, "launches per backend");
        }
        atMostSeconds("timeouts.startup_s", timeouts.startup());
        atMostSeconds("timeouts.request_s", timeouts.request());
        atMostSeconds("timeouts.shutdown_s", timeouts.shutdown());
        atMostSeconds("timeouts.queue_s", timeouts.queue());
        atMostSeconds("timeouts.fatal_grace_s", timeouts.fatalGrace());
        atMostSeconds("timeouts.stall_s", timeouts.stall());
        atMostSeconds("timeouts.progress_s", timeouts.progress());
        for (Backend b : backends) {
            String at = "backends[" + Experiment.fileIndex(backends, b) + "]";
            atMostSeconds(at + ".startup_s", b.startup());
            String problem = Hosts.problem(b.host());
            if (problem != null) {
                throw error(at + ".host", "host: " + problem);
            }
        }
        if (raw.hardware() != null && raw.hardware().devices() != null) {
            atMost("hardware.devices", raw.hardware().devices(), MAX_DEVICES, "accelerators on the machine");
        }
        if (raw.hardware() != null) {
            atMostGib("hardware.memory_gib", raw.hardware().memoryGib());
        }
        atMostGib("weights_gib", raw.weightsGib());
        for (Backend b : backends) {
            atMostGib("backends[" + Experiment.fileIndex(backends, b) + "].weights_gib", b.weightsGib());
        }
    }

    private void atMostGib(String path, Double value) throws ExperimentError {
        if (value != null && value > MAX_GIB) {
            throw error(path, String.format(Locale.ROOT, "%s is at most %,d GiB; found %s", path, MAX_GIB, value));
        }
    }

    private void atMost(String path, long value, long max, String what) throws ExperimentError {
        if (value > max) {
            throw error(path, String.format(Locale.ROOT, "%s is at most %,d (%s); found %,d", path, max, what, value));
        }
    }

    private void atMostSeconds(String path, Duration value) throws ExperimentError {
        if (value.compareTo(MAX_WAIT) > 0) {
            throw error(
                    path,
                    path + " is at most " + MAX_WAIT.toSeconds()
                            + " seconds (a week); a longer wait is a typo, not a limit");
        }
    }

    // Environment variable names; with patterns, a trailing '*' stands for any rest (SLURM_*).
    private List<String> checkNames(String path, List<String> names, boolean patterns) throws ExperimentError {
        if (names == null) {
            return List.of();
        }
        for (int i = 0; i < names.size(); i++) {
            String n = names.get(i);
            String bare = patterns && n != null && n.endsWith("*") ? n.substring(0, n.length() - 1) : n;
            if (bare == null || !ValueChecks.ENV_NAME.matcher(bare).matches()) {
                throw error(
                        path + "[" + i + "]",
                        path + " lists environment variable names"
                                + (patterns ? " or prefixes ending in '*' (e.g. SLURM_*)" : " (e.g. MY_API_KEY)")
                                + ", never values; found '" + n + "'");
            }
        }
        return List.copyOf(names);
    }

    // Flags as they are written in a command: "--auth", never "--auth=value" or a value.
    private List<String> checkSecretFlags(List<String> flags) throws ExperimentError {
        if (flags == null) {
            return List.of();
        }
        for (int i = 0; i < flags.size(); i++) {
            String f = flags.get(i);
            if (f == null || !f.matches("--?[A-Za-z0-9][A-Za-z0-9_.-]*")) {
                throw error(
                        "secret_flags[" + i + "]",
                        "secret_flags lists flags whose values are secret, as a command writes them (e.g."
                                + " --auth-header), never their values; found '" + f + "'");
            }
        }
        return List.copyOf(flags);
    }

    private Experiment.Limits checkLimits(ExperimentFile.LimitsFile raw) throws ExperimentError {
        if (raw == null) {
            return Experiment.Limits.DEFAULT;
        }
        Long response = raw.responseMib();
        if (response != null) {
            between("limits.response_mib", response, 1, 65_536, "MiB one response may send");
        }
        Long event = raw.eventKib();
        if (event != null) {
            between("limits.event_kib", event, 1, 1_048_576, "KiB one server-sent event may hold");
        }
        long log = raw.serverLogMib() == null ? Defaults.SERVER_LOG_MIB : raw.serverLogMib();
        between("limits.server_log_mib", log, 1, 1_048_576, "MiB one server's log keeps");
        long maxCells = raw.maxCells() == null ? Defaults.MAX_CELLS : raw.maxCells();
        between("limits.max_cells", maxCells, 1, 100_000, "matrix cells the experiment may have");
        return new Experiment.Limits(response, event, log, maxCells);
    }

    private void between(String path, long value, long min, long max, String what) throws ExperimentError {
        if (value < min || value > max) {
            throw error(
                    path, String.format(Locale.ROOT, "%s is %,d to %,d (%s); found %,d", path, min, max, what, value));
        }
    }

    private HardwareSpec checkHardware(ExperimentFile.HardwareFile h) throws ExperimentError {
        if (h == null) {
            return null;
        }
        if (h.devices() != null && h.devices() < 1) {
            throw error("hardware.devices", "hardware.devices is the number of accelerators, 1 or more, e.g. 8");
        }
        return new HardwareSpec(
                h.name(),
                h.accelerator(),
                h.chip(),
                h.devices(),
                values.gib(
                        "hardware.memory_gib", h.memoryGib(), "the memory of one accelerator, e.g. 'memory_gib: 141'"));
    }

    private Load checkLoad(LoadFile raw) throws ExperimentError {
        LoadFile l = raw == null ? new LoadFile(null, null, null, null, null, null) : raw;
        int outputLen = positive("load.output_len", l.outputLen(), Defaults.OUTPUT_LEN);
        int numPrompts = positive("load.num_prompts", l.numPrompts(), Defaults.NUM_PROMPTS);
        int concurrency = positive("load.max_concurrency", l.maxConcurrency(), Defaults.MAX_CONCURRENCY);
        int warmup = l.warmup() == null ? Defaults.WARMUP : l.warmup();
        if (warmup < 0) {
            throw error("load.warmup", "load.warmup must be 0 or more (unmeasured requests before each step)");
        }
        double rate = requestRate(l.requestRate());
        boolean lenient = Defaults.LENIENT_VERIFY;
        if (l.verify() != null) {
            switch (l.verify()) {
                case "strict" -> lenient = false;
                case "lenient" -> lenient = true;
                default ->
                    throw error(
                            "load.verify",
                            "load.verify is 'strict' (prompt_tokens must equal the target) or 'lenient', not '"
                                    + l.verify() + "'");
            }
        }
        return new Load(outputLen, numPrompts, concurrency, rate, warmup, lenient);
    }

    private double requestRate(Object raw) throws ExperimentError {
        if (raw == null) {
            return Defaults.REQUEST_RATE;
        }
        if (raw instanceof Number n && n.doubleValue() > 0) {
            // YAML's own infinity, .inf, arrives as a number.
            return n.doubleValue();
        }
        if (raw instanceof String s
                && (s.equalsIgnoreCase("inf") || s.equalsIgnoreCase("infinity") || s.equals(".inf"))) {
            return Double.POSITIVE_INFINITY;
        }
        throw error(
                "load.request_rate",
                "load.request_rate is requests per second above 0, or \"inf\" to send all at once; found '" + raw
                        + "'");
    }

    private int positive(String path, Integer value, int dflt) throws ExperimentError {
        if (value == null) {
            return dflt;
        }
        if (value <= 0) {
            throw error(path, path + " must be 1 or more, found " + value);
        }
        return value;
    }

    private Sweep checkSweep(SweepFile raw, long pad, Load load) throws ExperimentError {
        if (raw == null) {
            throw error("", "'sweep' is missing: give 'sweep: {strategy: list, targets: [4096, 8192]}'");
        }
        Strategy strategy;
        try {
            strategy = raw.strategy() == null ? Defaults.STRATEGY : Strategy.of(raw.strategy());
        } catch (IllegalArgumentException e) {
            throw error("sweep.strategy", "sweep." + e.getMessage());
        }
        Restart restart = Defaults.RESTART;
        if (raw.restart() != null) {
            switch (raw.restart()) {
                case "per_target" -> restart = Restart.PER_TARGET;
                case "on_failure" -> restart = Restart.ON_FAILURE;
                default ->
                    throw error(
                            "sweep.restart",
                            "sweep.restart is 'per_target' (a server per target, as the seeds) or 'on_failure'"
                                    + " (reuse a live server), not '" + raw.restart() + "'");
            }
        }
        List<Long> targets = raw.targets() == null ? List.of() : List.copyOf(raw.targets());
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < targets.size(); i++) {
            checkLength("sweep.targets[" + i + "]", targets.get(i), pad);
            if (!seen.add(targets.get(i))) {
                throw error("sweep.targets[" + i + "]", "the target " + targets.get(i) + " is listed twice");
            }
        }
        List<Long> curve = raw.curve() == null ? List.of() : List.copyOf(raw.curve());
        for (int i = 0; i < curve.size(); i++) {
            checkLength("sweep.curve[" + i + "]", curve.get(i), pad);
        }
        if (!curve.isEmpty() && strategy == Strategy.LIST) {
            throw error(
                    "sweep.curve",
                    "sweep.curve adds lengths to a frontier search; with strategy 'list' put them in 'targets'");
        }
        if (strategy == Strategy.LIST && targets.isEmpty()) {
            throw error(
                    "sweep",
                    "strategy 'list' needs targets, e.g. 'targets: [65536, 131072]' (prompt lengths in tokens)");
        }
        Frontier frontier = null;
        if (raw.frontier() != null) {
            frontier = checkFrontier(raw.frontier(), pad);
        } else if (strategy == Strategy.FRONTIER) {
            throw error("sweep", "strategy 'frontier' needs bounds, e.g. 'frontier: {min: 4096, max: 65536}'");
        }
        boolean auto = "auto".equals(raw.concurrency());
        List<Integer> levels = checkConcurrency(concurrencyList(raw.concurrency()), strategy, load);
        return new Sweep(
                strategy,
                targets,
                curve,
                raw.stopAfterFailure() != null && raw.stopAfterFailure(),
                frontier,
                restart,
                auto ? List.of(1) : levels,
                auto);
    }

    /**
     * {@code sweep.concurrency} as listed, or {@code auto}: [1, 2] for the checks of a map (the levels are known
     * only once the first server has stated what it holds at once).
     */
    private List<Integer> concurrencyList(Object raw) throws ExperimentError {
        if (raw == null) {
            return null;
        }
        if ("auto".equals(raw)) {
            return List.of(1, 2);
        }
        if (!(raw instanceof List<?> list)) {
            throw error(
                    "sweep.concurrency",
                    "sweep.concurrency lists requests sent at once, e.g. [1, 2, 4, 8], or is auto; found '" + raw
                            + "'");
        }
        List<Integer> levels = new java.util.ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            Object n = list.get(i);
            if (!(n instanceof Integer || n instanceof Long || n instanceof java.math.BigInteger)) {
                throw error(
                        "sweep.concurrency[" + i + "]",
                        "sweep.concurrency holds whole numbers from 1 to " + MAX_CONCURRENT + ", found " + n);
            }
            long v = ((Number) n).longValue();
            levels.add((int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, v)));
        }
        return levels;
    }

    /**
     * {@code sweep.concurrency}: the levels of the capacity map (docs/search.md#the-capacity-map), ascending. Only
     * a frontier search has a single-prompt frontier to search each level below, and "held at once" is read from
     * the gap between first tokens and the first finish, which a single output token does not have.
     */
    private List<Integer> checkConcurrency(List<Integer> raw, Strategy strategy, Load load) throws ExperimentError {
        if (raw == null) {
            return List.of(1);
        }
        if (raw.isEmpty()) {
            throw error("sweep.concurrency", "sweep.concurrency lists requests sent at once, e.g. [1, 2, 4, 8]");
        }
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < raw.size(); i++) {
            Integer n = raw.get(i);
            if (n == null || n < 1 || n > MAX_CONCURRENT) {
                throw error(
                        "sweep.concurrency[" + i + "]",
                        "sweep.concurrency holds whole numbers from 1 to " + MAX_CONCURRENT + ", found " + n);
            }
            if (!seen.add(n)) {
                throw error("sweep.concurrency[" + i + "]", "the concurrency " + n + " is listed twice");
            }
        }
        if (!seen.contains(1)) {
            throw error(
                    "sweep.concurrency",
                    "sweep.concurrency must include 1: every level is searched below the frontier of single"
                            + " prompts, e.g. [1, 2, 4, 8]");
        }
        if (seen.size() > 1 && strategy != Strategy.FRONTIER) {
            throw error(
                    "sweep.concurrency",
                    "sweep.concurrency above 1 needs 'strategy: frontier': each level is searched below the"
                            + " frontier of single prompts");
        }
        if (seen.size() > 1 && load.outputLen() < MIN_CONCURRENT_OUTPUT) {
            throw error(
                    "sweep.concurrency",
                    "sweep.concurrency above 1 needs 'load: {output_len: 16}' or at least "
                            + MIN_CONCURRENT_OUTPUT
                            + ": whether the requests were held at once is read from their tokens' times");
        }
        return raw.stream().sorted().toList();
    }

    private Frontier checkFrontier(ExperimentFile.FrontierFile f, long pad) throws ExperimentError {
        if (f.min() == null || f.max() == null) {
            throw error("sweep.frontier", "sweep.frontier needs 'min' and 'max' (prompt lengths in tokens)");
        }
        checkLength("sweep.frontier.min", f.min(), pad);
        checkLength("sweep.frontier.max", f.max(), pad);
        if (f.max() < f.min()) {
            throw error("sweep.frontier.max", "sweep.frontier.max (" + f.max() + ") is below min (" + f.min() + ")");
        }
        double precision = f.precision() == null ? Defaults.PRECISION : f.precision();
        if (!(precision > 0 && precision < 1)) {
            throw error("sweep.frontier.precision", "precision is relative, between 0 and 1, e.g. 0.01 for 1%");
        }
        long align = f.align() == null ? Defaults.ALIGN : f.align();
        if (align <= 0 || align > f.min()) {
            throw error("sweep.frontier.align", "align must be 1 or more and at most min, e.g. " + Defaults.ALIGN);
        }
        int maxLaunches = f.maxLaunches() == null ? Defaults.MAX_LAUNCHES : f.maxLaunches();
        if (maxLaunches <= 0) {
            throw error("sweep.frontier.max_launches", "max_launches must be 1 or more, e.g. " + Defaults.MAX_LAUNCHES);
        }
        Experiment.Start start = Defaults.START;
        if (f.start() != null) {
            switch (f.start()) {
                case "plan" -> start = Experiment.Start.PLAN;
                case "max" -> start = Experiment.Start.MAX;
                default ->
                    throw error(
                            "sweep.frontier.start",
                            "sweep.frontier.start is 'plan' (begin at the predicted frontier) or 'max', not '"
                                    + f.start() + "'");
            }
        }
        return new Frontier(f.min(), f.max(), precision, align, maxLaunches, start);
    }

    private void checkLength(String path, Long target, long pad) throws ExperimentError {
        if (target == null || target <= 0) {
            throw error(path, "a length is a number of tokens above 0, found " + target);
        }
        if (target > MAX_LENGTH - pad) {
            throw error(
                    path,
                    "target " + target + " + context_pad " + pad + " exceeds " + MAX_LENGTH
                            + ", the largest max_model_len an engine accepts: lower the target");
        }
    }

    private Timeouts checkTimeouts(TimeoutsFile raw) throws ExperimentError {
        TimeoutsFile t = raw == null ? new TimeoutsFile(null, null, null, null, null, null, null) : raw;
        return new Timeouts(
                values.seconds("timeouts.startup_s", t.startupS(), Defaults.STARTUP),
                values.seconds("timeouts.request_s", t.requestS(), Defaults.REQUEST),
                values.seconds("timeouts.shutdown_s", t.shutdownS(), Defaults.SHUTDOWN),
                values.seconds("timeouts.queue_s", t.queueS(), Defaults.QUEUE),
                values.seconds("timeouts.fatal_grace_s", t.fatalGraceS(), Defaults.FATAL_GRACE),
                // 0 switches the stall verdict off (docs/experiment-file.md).
                t.stallS() != null && t.stallS() == 0
                        ? Duration.ZERO
                        : values.seconds("timeouts.stall_s", t.stallS(), Defaults.STALL),
                t.progressS() != null && t.progressS() == 0
                        ? Duration.ZERO
                        : values.seconds("timeouts.progress_s", t.progressS(), Defaults.PROGRESS));
    }
}
