package dev.ctxprobe.engine;

import dev.ctxprobe.results.FailureClass;
import java.util.List;
import java.util.Objects;

/**
 * An engine's failure read from its log or its answer: one class, one sentence a user can act on, the
 * lines that prove it, and any capacity the engine named.
 *
 * @param evidence at most {@value #MAX_EVIDENCE_LINES} lines, each at most about {@value #MAX_LINE_CHARS} chars
 * @param named the limit (the search's hint) and the KV capacity the engine named, each null where it named none
 */
public record Diagnosis(FailureClass failureClass, String detail, List<String> evidence, Capacity named) {

    public static final int MAX_EVIDENCE_LINES = 10;
    public static final int MAX_LINE_CHARS = 300;

    public Diagnosis {
        Objects.requireNonNull(failureClass, "failureClass");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(named, "named");
        evidence = List.copyOf(evidence);
    }

    /** A diagnosis that names no capacity. */
    public Diagnosis(FailureClass failureClass, String detail, List<String> evidence) {
        this(failureClass, detail, evidence, Capacity.NONE);
    }
}
