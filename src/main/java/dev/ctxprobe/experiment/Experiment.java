package dev.ctxprobe.experiment;

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
        Limits limits) {

    public Experiment {
        secrets = List.copyOf(secrets);
        passEnv = List.copyOf(passEnv);
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
     */
    public record Limits(Long responseMib, Long eventKib, long serverLogMib) {
        /** The defaults. */
        public static final Limits DEFAULT = new Limits(null, null, Defaults.SERVER_LOG_MIB);

        public long serverLogBytes() {
            return serverLogMib << 20;
        }
    }

    /**
     * This experiment explored with another strategy, as {@code run --strategy} asks. A list needs targets: a file
     * that gives only frontier bounds gets the lengths a shell loop would try, {@code min} doubled up to {@code
     * max}. A frontier needs bounds: a file that gives only targets searches between its smallest and largest.
     */
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
        Sweep s = new Sweep(strategy, targets, curve, sweep.stopAfterFailure(), frontier, sweep.restart());
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
                limits);
    }

    /**
     * This experiment with only the named backends, in the file's order, as {@code run --backend} asks.
     *
     * @throws IllegalArgumentException naming the unknown ones and the known
     */
    public Experiment withBackends(java.util.Collection<String> names) {
        java.util.Set<String> unknown = new java.util.LinkedHashSet<>(names);
        backends.forEach(b -> unknown.remove(b.name()));
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("no backend named " + String.join(", ", unknown) + " in " + file
                    + "; its backends are "
                    + String.join(", ", backends.stream().map(Backend::name).toList()));
        }
        List<Backend> chosen =
                backends.stream().filter(b -> names.contains(b.name())).toList();
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
                chosen,
                modelConfig,
                weightsGib,
                secrets,
                passEnv,
                limits);
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
     */
    public record Sweep(
            Strategy strategy,
            List<Long> targets,
            List<Long> curve,
            boolean stopAfterFailure,
            Frontier frontier,
            Restart restart) {}

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
     */
    public record Timeouts(Duration startup, Duration request, Duration shutdown, Duration queue) {}

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
            boolean autoFirst) {}
}
