package dev.ctxprobe.engine;

import java.util.Locale;

/**
 * The phases of a step (docs/failures.md, "The phases of a step"), in order; a failure names the phase it happened
 * in.
 */
public enum Phase {
    PREFLIGHT,
    STARTUP,
    READINESS,
    WARMUP,
    MEASURE,
    SHUTDOWN;

    /** The id written in results, e.g. {@code startup}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return id();
    }
}
