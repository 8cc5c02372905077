package dev.ctxprobe.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** A launched server, wherever it runs: its name, where it answers, its log, its readiness, its end and its stop. */
public interface ServerHandle {
    /**
     * The launcher's name for the server, unique within a run, e.g. {@code local:12345} or {@code slurm:678}; null for
     * a server ctxprobe did not start (the {@code external} launcher), which counts as no launch.
     */
    String id();

    /** Where requests go once it is ready. */
    Endpoint endpoint();

    /** Its stdout and stderr as captured. */
    Path log();

    /** The local process group id; null for a server that is not a local process, as on a cluster. */
    default Long pid() {
        return null;
    }

    /** Accelerator memory used per device when it was launched; null where it cannot be read from here. */
    default List<Long> memoryBeforeMib() {
        return null;
    }

    /**
     * Waits until it is ready, has ended, or is out of startup time (or, on a cluster, out of queue time before it
     * started); a thread interrupt ends the wait at once.
     */
    Readiness awaitReady() throws InterruptedException;

    /**
     * How long it waited for the cluster to start it (so far, while it still waits); null for a server that is not
     * queued, such as a local process.
     */
    default Duration queued() {
        return null;
    }

    boolean isAlive();

    /**
     * How long after its server died this handle may take to know it: none for a local process, seconds for a
     * cluster job, whose end its controller reports later. A wait for a suspected crash waits that much longer.
     */
    default Duration exitNoticeDelay() {
        return Duration.ZERO;
    }

    /** Waits up to {@code limit} for it to end; how it ended, or empty while it still runs. */
    Optional<Termination> awaitExit(Duration limit) throws InterruptedException;

    /** How it ended, once it has. */
    Optional<Termination> termination();

    /** Stops every process of it (TERM, wait its shutdown time, KILL) and verifies they are gone. Idempotent. */
    StopReport stop();
}
