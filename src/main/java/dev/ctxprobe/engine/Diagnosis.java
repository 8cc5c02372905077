package dev.ctxprobe.engine;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import java.util.Objects;

/**
 * An engine's failure read from its log or its answer: one class, one sentence a user can act on, the
 * lines that prove it, and any capacity the engine named.
 *
 * @param evidence at most {@value #MAX_EVIDENCE_LINES} lines, each at most about {@value #MAX_LINE_CHARS} chars
 * @param maxContextHint the capacity the failure names (the search's hint), or null
 * @param kvCapacityTokens the KV capacity the engine reported, or null
 * @param hintKind what {@code maxContextHint} limits, when the rule knows better than the profile; else null
 */
public record Diagnosis(
        FailureClass failureClass,
        String detail,
        List<String> evidence,
        Long maxContextHint,
        Long kvCapacityTokens,
        HintKind hintKind) {

    public static final int MAX_EVIDENCE_LINES = 10;
    public static final int MAX_LINE_CHARS = 300;

    public Diagnosis {
        Objects.requireNonNull(failureClass, "failureClass");
        Objects.requireNonNull(detail, "detail");
        evidence = List.copyOf(evidence);
    }

    /** A diagnosis whose hint, if any, limits what the profile's hints limit. */
    public Diagnosis(
            FailureClass failureClass,
            String detail,
            List<String> evidence,
            Long maxContextHint,
            Long kvCapacityTokens) {
        this(failureClass, detail, evidence, maxContextHint, kvCapacityTokens, null);
    }
}
