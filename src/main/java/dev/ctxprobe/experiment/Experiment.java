package dev.ctxprobe.experiment;

import dev.ctxprobe.secrets.SecretFlags;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One experiment file, parsed once and validated: a model, a machine, a load, a sweep and the backends to
 * explore (docs/experiment-file.md). Immutable; everything downstream reads it and nothing writes it.
 *
 * @param hardware as the file states it, or null to detect it
 * @param vars free variables for commands, recorded in the results' {@code config}, in file order
 * @param modelConfig a model {@code config.json} to size the KV cache with instead of {@code {model}/config.json},
 *     as written (relative to the file's folder); null when not given
 * @param weightsGib the model's weights in GiB when no safetensors index tells them; null when not given
 * @param secrets names of environment variables whose values are masked wherever ctxprobe writes text, besides
 *     the backends' {@code api_key_env} and the names that look secret ({@code *_API_KEY}, {@code *_TOKEN}, ...)
 * @param passEnv names or {@code PREFIX*} patterns of ctxprobe's environment that servers get besides the
 *     built-in allow-list
 * @param limits bounds on what is read from servers and kept of their logs
 * @param secretFlags flags whose values are secret besides the built-in ones ({@code SecretFlags})
 * @param fromEnvironment the values of the commands' {@code {env:NAME}} placeholders, keyed {@code env:NAME}: read
 *     from ctxprobe's environment when the file was loaded, never written anywhere
 */
public record Experiment(
        Path file,
        String name,
        String description,
        String model,
        HardwareSpec hardware,
        Map<String, String> env,
        Map<String, Object> vars,
        long contextPad,
        Load load,
        Sweep sweep,
        Timeouts timeouts,
        List<Backend> backends,
        String modelConfig,
        Double weightsGib,
        List<String> secrets,
        List<String> passEnv,
        Limits limits,
        List<String> secretFlags,
        Map<String, String> fromEnvironment) {

    public Experiment {
        secrets = List.copyOf(secrets);
        passEnv = List.copyOf(passEnv);
        secretFlags = List.copyOf(secretFlags);
        fromEnvironment = Map.copyOf(fromEnvironment);
    }

    /** Which flags of the commands carry secrets: the built-in ones and {@code secret_flags}. */
    public SecretFlags flags() {
        return SecretFlags.of(secretFlags);
    }

    // A record prints its components; this one holds secrets.
    @Override
    public String toString() {
        return "Experiment[" + name + " in " + file + "]";
    }

    /** The names whose values are secret: {@code secrets} and every backend's {@code api_key_env}. */
    public java.util.Set<String> secretNames() {
        java.util.Set<String> names = new java.util.TreeSet<>(secrets);
        backends.forEach(b -> {
            if (b.apiKeyEnv() != null) {
                names.add(b.apiKeyEnv());
            }
        });
        return names;
    }

    /**
     * Bounds on what ctxprobe reads and keeps.
     *
     * @param responseMib the most one response may send (a whole stream, or a JSON body); null for the client's
     *     default, which grows with {@code output_len}
     * @param eventKib the most one server-sent event may hold; null for the client's default
     * @param serverLogMib the most one server's log keeps, its head and its tail
     * @param maxCells the most matrix cells the experiment may have, all backends together
     */
    public record Limits(Long responseMib, Long eventKib, long serverLogMib, long maxCells) {
        /** The defaults. */
        public static final Limits DEFAULT = new Limits(null, null, Defaults.SERVER_LOG_MIB, Defaults.MAX_CELLS);

        /** The given bounds with the default {@code max_cells}. */
        public Limits(Long responseMib, Long eventKib, long serverLogMib) {
            this(responseMib, eventKib, serverLogMib, Defaults.MAX_CELLS);
        }

        public long serverLogBytes() {
            return serverLogMib << 20;
        }
    }

    /**
     * This experiment explored with another strategy, as {@code run --strategy} asks. A list needs targets: a file
     * that gives only frontier bounds gets the lengths a shell loop would try, {@code min} doubled up to {@code
     * max}. A frontier needs bounds: a file that gives only targets searches between its smallest and largest.
     */
    /**
     * What {@link #withStrategy} makes up because the file does not say it, in a sentence for the console
     * (docs/search.md): a frontier's bounds from the targets, or a list's targets from the bounds; empty when the file
     * says all the strategy needs.
     */
    public java.util.Optional<String> derivedFor(Strategy strategy) {
        if (strategy == sweep.strategy()) {
            return java.util.Optional.empty();
        }
        Sweep derived = withStrategy(strategy).sweep();
        if (strategy == Strategy.FRONTIER && sweep.frontier() == null) {
            Frontier f = derived.frontier();
            return java.util.Optional.of(String.format(
                    java.util.Locale.ROOT,
                    "--strategy frontier: the file has no frontier:, so the search runs between its targets' smallest"
                            + " and largest: min %,d, max %,d, align %,d, precision %s, max_launches %d (write a"
                            + " frontier: mapping to choose them)",
                    f.min(),
                    f.max(),
                    f.align(),
                    f.precision(),
                    f.maxLaunches()));
        }
        if (strategy == Strategy.LIST && sweep.targets().isEmpty()) {
            return java.util.Optional.of("--strategy list: the file has no targets:, so the list doubles from"
                    + " frontier.min to frontier.max: "
                    + derived.targets().stream()
                            .map(t -> String.format(java.util.Locale.ROOT, "%,d", t))
                            .collect(java.util.stream.Collectors.joining(", ")));
        }
        return java.util.Optional.empty();
    }

    public Experiment withStrategy(Strategy strategy) {
        if (strategy == sweep.strategy()) {
            return this;
        }
        List<Long> targets = sweep.targets();
        Frontier frontier = sweep.frontier();
        if (strategy == Strategy.LIST && targets.isEmpty()) {
            java.util.ArrayList<Long> doubling = new java.util.ArrayList<>();
            for (long t = frontier.min(); t < frontier.max(); t = t * 2) {
                doubling.add(t);
            }
            doubling.add(frontier.max());
            targets = List.copyOf(doubling);
        }
        if (strategy == Strategy.FRONTIER && frontier == null) {
            long min = targets.stream().mapToLong(Long::longValue).min().orElseThrow();
            long max = targets.stream().mapToLong(Long::longValue).max().orElseThrow();
            frontier = new Frontier(min, max, Defaults.PRECISION, Math.min(Defaults.ALIGN, min), Defaults.MAX_LAUNCHES);
        }
        List<Long> curve = strategy == Strategy.LIST ? List.of() : sweep.curve();
        Sweep s = new Sweep(
                strategy,
                targets,
                curve,
                sweep.stopAfterFailure(),
                frontier,
                sweep.restart(),
                sweep.concurrency(),
                sweep.autoConcurrency());
        return new Experiment(
                file,
                name,
                description,
                model,
                hardware,
                env,
                vars,
                contextPad,
                load,
                s,
                timeouts,
                backends,
                modelConfig,
                weightsGib,
                secrets,
                passEnv,
                limits,
                secretFlags,
                fromEnvironment);
    }

    /**
     * This experiment with only the chosen backends, in the file's order, as {@code run --backend} asks. A selector
     * is a backend's name (a matrix's base name chooses all its cells), a cell's name, {@code k=v} (every cell whose
     * parameter {@code k} has the value {@code v}), or {@code base[k=v,...]} (the cells of {@code base} with all those
     * values); docs/experiment-file.md#matrix.
     *
     * @throws IllegalArgumentException naming the selectors that choose nothing, and the backends there are
     */
    public Experiment withBackends(java.util.Collection<String> selectors) {
        List<String> unknown = new java.util.ArrayList<>();
        java.util.Set<Backend> chosen = new java.util.HashSet<>();
        for (String selector : selectors) {
            List<Backend> matched =
                    backends.stream().filter(b -> b.selectedBy(selector)).toList();
            if (matched.isEmpty()) {
                unknown.add(selector);
            }
            chosen.addAll(matched);
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("no backend named " + String.join(", ", unknown) + " in " + file
                    + "; its backends are "
                    + String.join(", ", backends.stream().map(Backend::name).toList())
                    + (backends.stream().anyMatch(b -> !b.params().isEmpty())
                            ? " (choose cells by name, by base name, by k=v, or by base[k=v])"
                            : ""));
        }
        return new Experiment(
                file,
                name,
                description,
                model,
                hardware,
                env,
                vars,
                contextPad,
                load,
                sweep,
                timeouts,
                backends.stream().filter(chosen::contains).toList(),
                modelConfig,
                weightsGib,
                secrets,
                passEnv,
                limits,
                secretFlags,
                fromEnvironment);
    }

    /**
     * Where {@code backend} stands in the file's {@code backends} list: a matrix's cells all stand where their
     * backend is written, so that a message about a cell points at its line.
     */
    public static int fileIndex(List<Backend> backends, Backend backend) {
        return (int) backends.stream()
                .takeWhile(b -> b != backend)
                .map(Backend::base)
                .filter(base -> !base.equals(backend.base()))
                .distinct()
                .count();
    }

    /** The number of matrix cells among the backends (a backend without a matrix is no cell). */
    public int cells() {
        return (int) backends.stream().filter(b -> !b.params().isEmpty()).count();
    }

    /** The most steps the run may take: per backend, its list's targets or its search's {@code max_launches}. */
    public long maxSteps() {
        long perBackend = sweep.strategy() == Strategy.LIST
                ? sweep.targets().size()
                : Math.max(sweep.frontier().maxLaunches(), sweep.curve().size());
        return perBackend * backends.size();
    }

    /**
     * Hardware facts given by the file instead of detected.
     *
     * @param devices accelerators on the machine; null when not given
     * @param memoryGib memory of one accelerator in GiB; null when not given
     */
    public record HardwareSpec(String name, String accelerator, String chip, Integer devices, Double memoryGib) {}

    /**
     * What is sent at each step.
     *
     * @param requestRate requests per second with Poisson arrivals; infinite sends all at once
     * @param lenientVerify accept a server-reported prompt length that differs from the target
     */
    public record Load(
            int outputLen, int numPrompts, int maxConcurrency, double requestRate, int warmup, boolean lenientVerify) {}

    /**
     * Which targets are probed and how servers are reused.
     *
     * @param curve lengths a frontier search measures first, to draw the TTFT curve below the frontier
     * @param concurrency how many requests are sent at once, ascending, always starting with 1 (the frontier of
     *     single prompts); more than one level asks for the capacity map (docs/search.md#the-capacity-map)
     * @param autoConcurrency {@code sweep.concurrency: auto}: the map's levels double from 2 up to what the first
     *     server states it holds at once, known only once it has said it; {@code concurrency} is then [1]
     */
    public record Sweep(
            Strategy strategy,
            List<Long> targets,
            List<Long> curve,
            boolean stopAfterFailure,
            Frontier frontier,
            Restart restart,
            List<Integer> concurrency,
            boolean autoConcurrency) {

        /** The most requests a level of the capacity map sends at once. */
        public static final int MAX_CONCURRENT = 1024;

        public Sweep {
            concurrency = concurrency == null || concurrency.isEmpty() ? List.of(1) : List.copyOf(concurrency);
        }

        /** A sweep of single prompts only. */
        public Sweep(
                Strategy strategy,
                List<Long> targets,
                List<Long> curve,
                boolean stopAfterFailure,
                Frontier frontier,
                Restart restart) {
            this(strategy, targets, curve, stopAfterFailure, frontier, restart, List.of(1), false);
        }

        /** The levels above a single prompt, ascending: each gets a search of its own below the frontier. */
        public List<Integer> concurrent() {
            return concurrency.stream().filter(n -> n > 1).toList();
        }

        /** Whether the capacity map is asked for: levels above 1 listed, or {@code auto}. */
        public boolean mapped() {
            return autoConcurrency || concurrency.size() > 1;
        }
    }

    /** The search strategies: the targets in order, or a search for the largest that passes. */
    public enum Strategy {
        LIST,
        FRONTIER;

        /** The strategy a file or the command line names, in its lower-case word. */
        public static Strategy of(String word) {
            return switch (word) {
                case "list" -> LIST;
                case "frontier" -> FRONTIER;
                default ->
                    throw new IllegalArgumentException("the strategy is 'list' or 'frontier', not '" + word + "'");
            };
        }

        /** The word files and results use. */
        public String id() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** per_target launches a server for every target (as the seeds); on_failure reuses a live one. */
    public enum Restart {
        PER_TARGET,
        ON_FAILURE
    }

    /**
     * Bounds of the frontier search.
     *
     * @param start where the search begins after the curve: at the predicted frontier, or at {@code max}
     */
    public record Frontier(long min, long max, double precision, long align, int maxLaunches, Start start) {

        /** A search that starts from the prediction, the default. */
        public Frontier(long min, long max, double precision, long align, int maxLaunches) {
            this(min, max, precision, align, maxLaunches, Defaults.START);
        }
    }

    /** Where a frontier search begins ({@code sweep.frontier.start}). */
    public enum Start {
        /**
         * At the frontier {@code ctxprobe plan} predicts, then one {@code align} above it; at {@code max} when
         * nothing is predicted.
         */
        PLAN,
        /** At {@code max}, whatever is predicted. */
        MAX;

        /** The word files use. */
        public String id() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Token ids {@code [from, to)} that are safe prompt fillers for a model's vocabulary. */
    public record IdRange(int from, int to) {}

    /**
     * Where a backend's servers run: a launcher kind ({@code local}, the default; {@code slurm}) and that kind's
     * own options, as the file gives them.
     */
    public record Launcher(String kind, Map<String, Object> options) {
        public Launcher {
            options = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(options));
        }
    }

    /**
     * Time limits of a step's phases.
     *
     * @param queue how long a cluster may keep a step's job waiting before it runs (never part of startup)
     * @param fatalGrace how long a starting server that printed a fatal line may still take to become ready
     * @param stall how long a starting server may be silent and idle before it is judged stalled; zero for never
     * @param progress how long a live server may hold a step's requests without progress; zero for never
     */
    public record Timeouts(
            Duration startup,
            Duration request,
            Duration shutdown,
            Duration queue,
            Duration fatalGrace,
            Duration stall,
            Duration progress) {
        /** The limits with the fast verdicts at their defaults. */
        public Timeouts(Duration startup, Duration request, Duration shutdown, Duration queue) {
            this(startup, request, shutdown, queue, Defaults.FATAL_GRACE, Defaults.STALL, Defaults.PROGRESS);
        }
    }

    /**
     * One engine and its server command.
     *
     * @param port null when ctxprobe picks a free port for each launch
     * @param command the template as written (null for an already-running endpoint)
     * @param env the environment of the server: the file's top-level env with the backend's own on top
     * @param vars the experiment's vars with the backend's own on top
     * @param healthPath null to use the engine profile's
     * @param startup the backend's own startup limit, or the experiment's
     * @param tokenIds ids to fill prompts with; null for the profile's
     * @param apiKeyEnv the name of an environment variable holding an API key, never its value
     * @param launcher where its servers run: the file's top-level launcher with the backend's own keys on top
     * @param modelConfig the backend's own {@code model_config} (the experiment's applies when null)
     * @param weightsGib the backend's own {@code weights_gib} (the experiment's applies when null)
     * @param autoFirst the search's first launch passes the engine's own automatic length for {@code
     *     {max_model_len}} (vLLM's {@code auto}), so that the engine states its memory limit in one launch
     * @param check what each measured request also checks: the backend's own {@code check}, else the file's; null
     *     for nothing
     * @param params the values of this backend's matrix cell by parameter, in the order the file names the
     *     parameters, each as written; empty for a backend without a matrix (docs/experiment-file.md#matrix)
     */
    public record Backend(
            String name,
            String engine,
            String host,
            Integer port,
            String command,
            Map<String, String> env,
            Map<String, Object> vars,
            String healthPath,
            Duration startup,
            IdRange tokenIds,
            String apiKeyEnv,
            Launcher launcher,
            String modelConfig,
            Double weightsGib,
            boolean autoFirst,
            Check check,
            Map<String, String> params) {

        public Backend {
            params = params == null || params.isEmpty()
                    ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(params));
        }

        /** The name the file gives the backend: a cell's name without its values. */
        public String base() {
            return dev.ctxprobe.results.CellName.base(name);
        }

        /** True when {@code selector} of {@code run --backend} chooses this backend (see {@link #withBackends}). */
        boolean selectedBy(String selector) {
            if (selector.equals(name) || selector.equals(base())) {
                return true;
            }
            if (params.isEmpty()) {
                return false;
            }
            String wanted = selector;
            if (selector.endsWith("]") && selector.contains("[")) {
                if (!selector.substring(0, selector.indexOf('[')).equals(base())) {
                    return false;
                }
                wanted = selector.substring(selector.indexOf('[') + 1, selector.length() - 1);
            }
            Map<String, String> values = dev.ctxprobe.results.CellName.parse(wanted);
            return !values.isEmpty()
                    && values.entrySet().stream().allMatch(e -> e.getValue().equals(params.get(e.getKey())));
        }
    }
}
