package dev.ctxprobe.experiment;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One experiment file, parsed once and validated: a model, a machine, a load, a sweep and the backends to
 * explore (spec 02). Immutable; everything downstream reads it and nothing writes it.
 *
 * @param hardware as the file states it, or null to detect it
 * @param vars free variables for commands, recorded in the results' {@code config}, in file order
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
        List<Backend> backends) {

    /** Hardware facts given by the file instead of detected. */
    public record HardwareSpec(String name, String accelerator, String chip) {}

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

    /** The search strategies of spec 05. */
    public enum Strategy {
        LIST,
        FRONTIER
    }

    /** per_target launches a server for every target (as the seeds); on_failure reuses a live one. */
    public enum Restart {
        PER_TARGET,
        ON_FAILURE
    }

    /** Bounds of the frontier search. */
    public record Frontier(long min, long max, double precision, long align, int maxLaunches) {}

    /** Token ids {@code [from, to)} that are safe prompt fillers for a model's vocabulary. */
    public record IdRange(int from, int to) {}

    /** Time limits of a step's phases. */
    public record Timeouts(Duration startup, Duration request, Duration shutdown) {}

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
            String apiKeyEnv) {}
}
