package dev.ctxprobe.explore;

import java.util.Locale;

/**
 * What the step now running is doing, as the console shows it. Not the failure phases of results ({@link
 * dev.ctxprobe.engine.Phase}): these say where the time goes while nothing has failed.
 */
public enum StepPhase {
    /** Waiting for the launch to be allowed: the port and the accelerators' memory must be free. */
    QUEUED,
    /** The launcher is starting the server. */
    LAUNCHING,
    /** The server runs and is not ready yet: loading weights, capturing graphs. */
    LOADING,
    /** The server is ready; the requests are being prepared. */
    READY,
    /** A request was sent and no token has come back: the prompt is being processed. */
    PREFILL,
    /** The first token came back; the rest of the answer is arriving. */
    DECODING,
    /** The server is being stopped and checked gone. */
    STOPPING;

    /** The word shown, e.g. {@code prefill}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
