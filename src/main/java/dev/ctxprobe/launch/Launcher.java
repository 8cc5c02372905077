package dev.ctxprobe.launch;

import java.util.Map;
import java.util.Optional;

/**
 * Starts servers where they run: a local process group ({@link LocalLauncher}), a cluster job, a Pod. Each launcher
 * checks what must hold before a launch, records what it starts in the run's {@link Ledger}, and hands back a
 * {@link ServerHandle} that knows its endpoint, its log and how it ended. Kinds are named in the experiment
 * ({@code launcher: local}) and found through {@link Launchers}.
 */
public interface Launcher extends AutoCloseable {
    /**
     * What would make a launch of {@code spec} fail for reasons that say nothing about its length: a port already
     * taken, accelerator memory still held after the last stop (waiting for it up to the spec's shutdown time).
     * Empty when the launch may go ahead.
     */
    Optional<Refusal> preflight(LaunchSpec spec) throws InterruptedException;

    /**
     * Starts the server described by {@code spec}; it is recorded in the ledger until its stop shows it gone.
     *
     * @throws LaunchException when the command cannot be started at all (missing program, unwritable log)
     */
    ServerHandle launch(LaunchSpec spec) throws LaunchException;

    /**
     * A port for a server whose backend names none, picked where the server will listen: a free port on this
     * machine for a local process.
     */
    default int freePort() {
        return Ports.free();
    }

    /**
     * Whether servers with these environments may run at the same time ({@code run --parallel}): false when they
     * would compete for something this launcher checks before each launch, such as the same accelerators.
     */
    default boolean canRunTogether(Map<String, String> env, Map<String, String> otherEnv) {
        return true;
    }

    /** Releases what the launcher holds (no server: each handle is stopped by its owner). */
    @Override
    default void close() {}
}
