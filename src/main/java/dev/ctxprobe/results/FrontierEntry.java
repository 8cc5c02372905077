package dev.ctxprobe.results;

import java.util.List;

/**
 * The answer for one backend: the largest target a request proved and the smallest failing one above it.
 *
 * @param bracketRatio {@code (min_failed - max_ok) / max_ok}
 * @param launches server launches spent
 * @param predictedMax the best capacity hint, as a target
 * @param nonMonotonic failed targets below a passing one
 * @param mode {@code per_target} or {@code on_failure}: the two answer slightly different questions
 * @param strategy {@code list} or {@code frontier}
 * @param stoppedBecause why the search ended early, or null
 */
public record FrontierEntry(
        Long maxOkTarget,
        Long minFailedTarget,
        Double bracketRatio,
        int launches,
        Long predictedMax,
        List<Long> nonMonotonic,
        String mode,
        String strategy,
        String stoppedBecause) {}
