package dev.ctxprobe.launch;

import java.time.Duration;

/** How waiting for a server ended. */
public sealed interface Readiness {
    /** Time from launch until the outcome was seen. */
    Duration after();

    /** The readiness path answered 200. */
    record Ready(Duration after, String via) implements Readiness {}

    /** The server ended before it was ready. */
    record Exited(Duration after, Termination how) implements Readiness {}

    /** Still not ready when the startup time ran out; the server is still running. */
    record TimedOut(Duration after, String lastAnswer) implements Readiness {}

    /**
     * A cluster had not started it when the queue time ran out: it still waits (it is not stopped yet).
     *
     * @param after the time it spent in the queue
     * @param state the cluster's word for where it stands, e.g. {@code PENDING}
     * @param reason why the cluster says it waits, e.g. {@code Resources}, {@code PartitionDown}
     */
    record Queued(Duration after, String state, String reason) implements Readiness {}

    /**
     * A cluster holds the job in a state from which it cannot start without someone's action (held, its launch
     * failed and it was held, a dependency never satisfied, an account it may not use): a verdict at once, not at
     * the queue time (docs/slurm.md). The job is still there until it is stopped.
     *
     * @param refusal the class ({@code cluster_ended} or {@code submit_rejected}), the sentence and the evidence
     * @param afterCause from the first answer of the cluster that showed that state to this verdict
     */
    record Refused(Duration after, Refusal refusal, Duration afterCause) implements Readiness {}
}
