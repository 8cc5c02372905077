package dev.ctxprobe.results;

import java.util.List;

/**
 * The answer for one backend (the results' {@code frontier} entry): the largest target a real request proved and
 * the smallest failing one above it, taken from attempts only: nothing is inferred from a pass above or a failure
 * below.
 *
 * @param maxOkTarget the largest target that passed, or null
 * @param minFailedTarget the smallest target above {@code maxOkTarget} whose failure bounds the length (the
 *     smallest such failure when nothing passed), or null
 * @param bracketRatio {@code (minFailed - maxOk) / maxOk}; null unless both exist
 * @param launches server launches spent
 * @param predictedMax the best capacity hint converted to a target (unaligned), or null
 * @param nonMonotonic length failures below {@code maxOkTarget}, ascending
 * @param mode {@code per_target} or {@code on_failure}: the two answer slightly different questions
 * @param strategy {@code list} or {@code frontier}
 * @param stoppedBecause null (converged, or still running), {@link #FULL_RANGE_FITS}, {@link #NOTHING_FITS},
 *     {@link #MAX_LAUNCHES}, {@code interrupted}, or the id of the failure class that ended the search
 * @param predicted what {@code ctxprobe plan} predicted before the first launch, with its inputs, beside the
 *     measured answer; null when nothing was predicted (a file from before predictions, an endpoint already running)
 */
public record Frontier(
        Long maxOkTarget,
        Long minFailedTarget,
        Double bracketRatio,
        int launches,
        Long predictedMax,
        List<Long> nonMonotonic,
        String mode,
        String strategy,
        String stoppedBecause,
        BackendPrediction predicted) {

    public static final String FULL_RANGE_FITS = "full range fits";
    public static final String NOTHING_FITS = "nothing fits";
    public static final String MAX_LAUNCHES = "max_launches";
    public static final String INTERRUPTED = "interrupted";

    public Frontier {
        nonMonotonic = nonMonotonic == null ? List.of() : List.copyOf(nonMonotonic);
    }

    /** One launched step as the answer sees it. */
    public record Attempt(long target, Outcome outcome) {}

    /**
     * Summarises attempts in execution order; {@code launches} is their number. Says "full range fits" when
     * something passed and no length failure lies above it, "nothing fits" when only length failures were seen,
     * and names the first failure that says nothing about length.
     */
    public static Frontier of(List<Attempt> attempts) {
        Long maxOk = null;
        String stopped = null;
        for (Attempt a : attempts) {
            if (a.outcome().passed()) {
                maxOk = maxOk == null ? a.target() : Math.max(maxOk, a.target());
            } else if (a.outcome().endsSearch() && stopped == null) {
                stopped = a.outcome().id();
            }
        }
        Long minFailed = null;
        for (Attempt a : attempts) {
            if (a.outcome().boundsLength()
                    && (maxOk == null || a.target() > maxOk)
                    && (minFailed == null || a.target() < minFailed)) {
                minFailed = a.target();
            }
        }
        long ok = maxOk == null ? Long.MIN_VALUE : maxOk;
        List<Long> nonMonotonic = attempts.stream()
                .filter(a -> a.outcome().boundsLength() && a.target() < ok)
                .map(Attempt::target)
                .distinct()
                .sorted()
                .toList();
        Double ratio = maxOk != null && minFailed != null ? (minFailed - maxOk) / (double) maxOk : null;
        if (stopped == null && maxOk != null && minFailed == null) {
            stopped = FULL_RANGE_FITS;
        } else if (stopped == null && maxOk == null && minFailed != null) {
            stopped = NOTHING_FITS;
        }
        return new Frontier(maxOk, minFailed, ratio, attempts.size(), null, nonMonotonic, null, null, stopped, null);
    }

    /** The answer the launched steps of one backend show (a file without a frontier section, such as a seed). */
    public static Frontier ofSteps(List<Scenario> steps) {
        return of(steps.stream()
                .filter(s -> s.outcome().launched())
                .map(Scenario::attempt)
                .toList());
    }

    public Frontier withLaunches(int n) {
        return with(n, predictedMax, mode, strategy, stoppedBecause, predicted);
    }

    public Frontier withStoppedBecause(String reason) {
        return with(launches, predictedMax, mode, strategy, reason, predicted);
    }

    public Frontier withPredictedMax(Long hinted) {
        return with(launches, hinted, mode, strategy, stoppedBecause, predicted);
    }

    /** The same answer beside what was predicted for it before the first launch. */
    public Frontier withPredicted(BackendPrediction prediction) {
        return with(launches, predictedMax, mode, strategy, stoppedBecause, prediction);
    }

    /** The same answer, saying which strategy and restart mode produced it. */
    public Frontier producedBy(String strategyId, String modeId) {
        return with(launches, predictedMax, modeId, strategyId, stoppedBecause, predicted);
    }

    // The bracket comes from the attempts; what is said about the search around it changes.
    private Frontier with(
            int n, Long hinted, String modeId, String strategyId, String stopped, BackendPrediction prediction) {
        return new Frontier(
                maxOkTarget,
                minFailedTarget,
                bracketRatio,
                n,
                hinted,
                nonMonotonic,
                modeId,
                strategyId,
                stopped,
                prediction);
    }
}
