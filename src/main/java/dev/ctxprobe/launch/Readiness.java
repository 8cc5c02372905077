package dev.ctxprobe.launch;

import java.time.Duration;

/** How waiting for a server ended. */
public sealed interface Readiness {
    /** Time from launch until the outcome was seen. */
    Duration after();

    /** The readiness path answered 200. */
    record Ready(Duration after, String via) implements Readiness {}

    /** The process exited before it was ready. */
    record Exited(Duration after, int exitCode) implements Readiness {}

    /** Still not ready when the startup time ran out; the process is still running. */
    record TimedOut(Duration after, String lastAnswer) implements Readiness {}
}
