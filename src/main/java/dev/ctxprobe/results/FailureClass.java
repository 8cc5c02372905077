package dev.ctxprobe.results;

import java.util.Arrays;
import java.util.Locale;

/** Why a step failed: exactly one class per failed step (docs/failures.md), written as its lower-case id. */
public enum FailureClass {
    /** The port was taken before launch. */
    PORT_BUSY(false),
    /** Accelerator memory still held by another process before launch. */
    GPU_BUSY(false),
    /** The engine refused at startup: the context does not fit in KV memory. */
    KV_INSUFFICIENT(true),
    /** Out of memory while loading or capturing graphs. */
    OOM_STARTUP(true),
    /** The engine rejected its arguments (length above the model's limit, bad flag). */
    CONFIG_REJECTED(true),
    /** Exited during startup for another reason. */
    STARTUP_CRASH(true),
    /** Still not ready after startup_s. */
    STARTUP_TIMEOUT(true),
    /** HTTP 4xx or an error event: the prompt is too long for the running server. */
    REQUEST_REJECTED(true),
    /** Answered, but prompt_tokens is smaller than the target (or LMDeploy's empty 200). */
    TRUNCATED(true),
    /** prompt_tokens differs from the target for another reason. */
    TOKEN_MISMATCH(true),
    /**
     * A concurrency probe's requests were all served with their exact length, but not held at once: queued,
     * preempted, or more requests than the server has slots (docs/failures.md#not_concurrent).
     */
    NOT_CONCURRENT(true),
    /** The server died while serving. */
    SERVER_CRASH(true),
    /** No complete answer within request_s. */
    TIMEOUT(true),
    /** Any other HTTP or protocol failure. */
    HTTP_ERROR(true),
    /**
     * A cluster kept the job waiting past {@code timeouts.queue_s}; its pending reason (resources, a QOS limit, a
     * partition down) is the evidence. Nothing ran, so it says nothing about length.
     */
    QUEUE_TIMEOUT(false),
    /**
     * The cluster ended the job for its own reasons: its time limit, a node failure, preemption, or a cancel by
     * someone other than ctxprobe. The same length may well pass on another try.
     */
    CLUSTER_ENDED(false),
    /** The cluster refused the job when it was submitted (a partition, account, QOS or gres it does not know). */
    SUBMIT_REJECTED(false),
    /** ctxprobe itself failed: never hidden behind another class. */
    CLIENT_ERROR(false),
    /** The user stopped the run. */
    INTERRUPTED(false);

    private final boolean saysSomethingAboutLength;

    FailureClass(boolean saysSomethingAboutLength) {
        this.saysSomethingAboutLength = saysSomethingAboutLength;
    }

    /** False for failures that a search must not read as "too long". */
    public boolean saysSomethingAboutLength() {
        return saysSomethingAboutLength;
    }

    /**
     * A kept server ({@code restart: on_failure}) that answered with this may still be busy with the abandoned
     * prompt, so the next probe would time out too or measure a TTFT inflated by it: it is replaced.
     */
    public boolean replacesKeptServer() {
        return this == TIMEOUT || this == HTTP_ERROR || this == SERVER_CRASH;
    }

    /** The server refused to start for its length; one launched for a shorter length may still start. */
    public boolean refusedForLength() {
        return this == KV_INSUFFICIENT || this == OOM_STARTUP || this == CONFIG_REJECTED;
    }

    /** The id written in results, e.g. {@code kv_insufficient}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The class for an id as written in results. */
    public static FailureClass fromId(String id) {
        return Arrays.stream(values())
                .filter(c -> c.id().equals(id))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown failure class '" + id + "'"));
    }

    @Override
    public String toString() {
        return id();
    }
}
