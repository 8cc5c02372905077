package dev.ctxprobe.client;

/**
 * How many carrier threads the virtual threads run on: half the cores, at least one, set by ctxprobe itself so that
 * it holds however ctxprobe is started ({@code ./ctxprobe}, {@code java -jar}, a container's entry point, a cluster
 * job). Responses are read and stamped by the client's one read-loop thread; with the request threads on every core
 * it waits for a core behind them, and the many-stream TTFT error grows a hundredfold (BENCHMARKS.md, "Timing"). The
 * other half is left to the server being measured when both share the machine.
 */
public final class Carriers {
    /** The JDK's setting for the default virtual-thread scheduler, read once, when the first virtual thread starts. */
    public static final String PROPERTY = "jdk.virtualThreadScheduler.parallelism";

    private Carriers() {}

    /**
     * Sets {@link #PROPERTY} unless it was given ({@code CTXPROBE_JAVA_OPTS=-Djdk.virtualThreadScheduler.parallelism=N}
     * still wins). Called first in {@code main}, before any virtual thread exists: later it would change nothing.
     *
     * @return the number of carriers in force
     */
    public static String configure() {
        String given = System.getProperty(PROPERTY);
        if (given != null && !given.isBlank()) {
            return given;
        }
        String half = Integer.toString(forCores(Runtime.getRuntime().availableProcessors()));
        System.setProperty(PROPERTY, half);
        return half;
    }

    /** Half of {@code cores}, at least one. */
    static int forCores(int cores) {
        return Math.max(1, cores / 2);
    }
}
