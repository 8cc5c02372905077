package dev.ctxprobe.launch;

import java.io.IOException;

/** Starts servers; a local process group today, a Kubernetes Pod later (spec 01). */
public interface Launcher {
    /**
     * Starts the server described by {@code spec}.
     *
     * @throws IOException when the command cannot be started at all (missing program, unwritable log)
     */
    ServerHandle launch(LaunchSpec spec) throws IOException;
}
