package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.experiment.Experiment.Start;
import dev.ctxprobe.experiment.Experiment.Strategy;
import java.time.Duration;

/**
 * What an experiment file means by a key it leaves out, in one place: each constant names its key of
 * docs/experiment-file.md, whose tables state the same values to users, and says why it is that value.
 */
public final class Defaults {
    /** {@code context_pad}: room for one output token past every engine's largest-prompt rule (docs/engines.md). */
    public static final long CONTEXT_PAD = 1024;

    /**
     * {@code backends[].launcher} of a backend without a command: the endpoint is already running, so the launcher
     * only points at its host and port and stops nothing (docs/experiment-file.md#backends).
     */
    public static final String EXTERNAL_LAUNCHER = "external";

    /** {@code load.output_len}: one token is enough to show the prompt was served; more measures decoding instead. */
    public static final int OUTPUT_LEN = 1;

    /** {@code load.num_prompts}: one measured request answers whether a length is served. */
    public static final int NUM_PROMPTS = 1;

    /** {@code load.max_concurrency}: one request in flight, so a step measures its length and not a queue. */
    public static final int MAX_CONCURRENCY = 1;

    /** {@code load.request_rate}: all at once within {@code max_concurrency}; a rate is a choice of the file. */
    public static final double REQUEST_RATE = Double.POSITIVE_INFINITY;

    /** {@code load.warmup}: a fresh server's first request pays one-time costs that are not the length's. */
    public static final int WARMUP = 1;

    /** {@code load.verify}: strict, since a prompt the server counted otherwise is not the length asked for. */
    public static final boolean LENIENT_VERIFY = false;

    /** {@code sweep.strategy}: a list, the targets in the order written, as the seeds ran them. */
    public static final Strategy STRATEGY = Strategy.LIST;

    /** {@code sweep.restart}: a new server per target, as the seeds did, so no step inherits another's state. */
    public static final Restart RESTART = Restart.PER_TARGET;

    /** {@code sweep.frontier.precision}: a bracket within 1% of the frontier is finer than any deployment's choice. */
    public static final double PRECISION = 0.01;

    /** {@code sweep.frontier.align}: a multiple of the engines' cache blocks and of llama.cpp's context padding. */
    public static final long ALIGN = 256;

    /** {@code sweep.frontier.max_launches}: a bisection of a wide range to {@link #PRECISION}; a right plan needs 2. */
    public static final int MAX_LAUNCHES = 12;

    /** {@code sweep.frontier.start}: the predicted frontier, two launches when it is right (docs/plan.md). */
    public static final Start START = Start.PLAN;

    /** {@code timeouts.startup_s}: a large model's weights and graph capture may take tens of minutes to load. */
    public static final Duration STARTUP = Duration.ofSeconds(1800);

    /** {@code timeouts.request_s}: the prefill of a prompt near the frontier may take minutes. */
    public static final Duration REQUEST = Duration.ofSeconds(1800);

    /** {@code timeouts.shutdown_s}: long enough for an engine to free its accelerators after SIGTERM. */
    public static final Duration SHUTDOWN = Duration.ofSeconds(60);

    /**
     * {@code timeouts.fatal_grace_s}: after a fatal line, time for the rest of a failing server to exit by itself (and
     * its log to name the root cause) and for a line that was no real failure to be followed by readiness.
     */
    public static final Duration FATAL_GRACE = Duration.ofSeconds(30);

    /**
     * {@code timeouts.stall_s}: a loading engine prints progress or uses CPU (reading weights, compiling, capturing
     * graphs) far more often than this; five minutes of neither is a hang, not a slow load.
     */
    public static final Duration STALL = Duration.ofSeconds(300);

    /**
     * {@code timeouts.progress_s}: an engine shows progress with every prefill batch and every token; one batch of a
     * prompt near a million tokens may take minutes on a slow machine, so only five minutes of none is a hang.
     */
    public static final Duration PROGRESS = Duration.ofSeconds(300);

    /** {@code timeouts.queue_s}: a cluster's queue; a step waiting longer is a busy cluster, not a measurement. */
    public static final Duration QUEUE = Duration.ofSeconds(3600);

    /** {@code backends[].host}: loopback, since serving on all interfaces is a choice the file writes. */
    public static final String HOST = "127.0.0.1";

    /** {@code limits.server_log_mib}: a verbose engine's whole log fits; a log without end cannot fill the disk. */
    public static final long SERVER_LOG_MIB = 64;

    /**
     * {@code limits.max_cells}: a matrix of a few parameters with a few values each; beyond it a matrix is more
     * likely a mistake (a list pasted as values) than a plan, and its launches would run for days.
     */
    public static final long MAX_CELLS = 64;

    /**
     * Not a default but the bound of every length: target + {@code context_pad} is at most this, the largest
     * {@code max_model_len} an engine accepts (a 32-bit integer), which the loader checks and the prediction uses.
     */
    public static final long MAX_MODEL_LEN = Integer.MAX_VALUE;

    private Defaults() {}
}
