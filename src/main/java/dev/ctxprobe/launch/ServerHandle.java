package dev.ctxprobe.launch;

import java.nio.file.Path;
import java.util.OptionalInt;

/** A launched server: its process group, its log, its readiness and its stop. */
public interface ServerHandle {
    /** The leader's pid, which is also its process group id. */
    long pid();

    Path logFile();

    /** Waits until ready, exited or out of startup time. */
    Readiness awaitReady() throws InterruptedException;

    boolean isAlive();

    /** Waits up to {@code limit} for the leader to exit; true when it has. */
    boolean awaitExit(java.time.Duration limit) throws InterruptedException;

    /** The leader's exit code once it has exited. */
    OptionalInt exitCode();

    /** TERM to the whole group, wait, KILL, verify gone. Safe to call more than once. */
    StopReport stop();
}
