package dev.ctxprobe.explore;

import dev.ctxprobe.engine.HintKind;
import java.util.List;

/**
 * The answer of one backend (spec 05 "Reported answer"), taken from probes only: nothing is
 * inferred from a pass above or a failure below.
 *
 * @param maxOkTarget the largest target that passed, or null
 * @param minFailedTarget the smallest target above {@code maxOkTarget} whose failure says something
 *     about length (the smallest such failure when nothing passed), or null
 * @param bracketRatio {@code (minFailed - maxOk) / maxOk}; null unless both exist
 * @param launches how many launches it took
 * @param predictedMax the most recent capacity hint converted to a target (unaligned), or null
 * @param nonMonotonic length failures below {@code maxOkTarget}, ascending
 * @param stoppedBecause null (converged or still running), {@link #FULL_RANGE_FITS}, {@link
 *     #NOTHING_FITS}, {@link #MAX_LAUNCHES}, or the id of the failure class that stopped the search
 *     (e.g. {@code port_busy})
 */
public record Frontier(
        Long maxOkTarget,
        Long minFailedTarget,
        Double bracketRatio,
        int launches,
        Long predictedMax,
        List<Long> nonMonotonic,
        String stoppedBecause) {

    public static final String FULL_RANGE_FITS = "full range fits";
    public static final String NOTHING_FITS = "nothing fits";
    public static final String MAX_LAUNCHES = "max_launches";

    public Frontier {
        nonMonotonic = List.copyOf(nonMonotonic);
    }

    /**
     * Summarises probes in execution order; {@code launches} is their number. Says "full range
     * fits" when something passed and no length failure lies above it, "nothing fits" when only
     * length failures were seen, and names the first failure that says nothing about length.
     */
    public static Frontier of(List<Probe> probes, long pad, long promptAllowance) {
        Long maxOk = null;
        Long predicted = null;
        String stopped = null;
        for (Probe p : probes) {
            if (p.passed()) {
                maxOk = maxOk == null ? p.target() : Math.max(maxOk, p.target());
            } else if (!p.failure().saysSomethingAboutLength() && stopped == null) {
                stopped = p.failure().id();
            }
            Long hinted = hintTarget(p, pad, promptAllowance);
            if (hinted != null) {
                predicted = hinted;
            }
        }
        Long minFailed = null;
        for (Probe p : probes) {
            if (isLengthFailure(p)
                    && (maxOk == null || p.target() > maxOk)
                    && (minFailed == null || p.target() < minFailed)) {
                minFailed = p.target();
            }
        }
        long ok = maxOk == null ? Long.MIN_VALUE : maxOk;
        List<Long> nonMonotonic = probes.stream()
                .filter(p -> isLengthFailure(p) && p.target() < ok)
                .map(Probe::target)
                .distinct()
                .sorted()
                .toList();
        Double ratio = maxOk != null && minFailed != null ? (minFailed - maxOk) / (double) maxOk : null;
        if (stopped == null && maxOk != null && minFailed == null) {
            stopped = FULL_RANGE_FITS;
        } else if (stopped == null && maxOk == null && minFailed != null) {
            stopped = NOTHING_FITS;
        }
        return new Frontier(maxOk, minFailed, ratio, probes.size(), predicted, nonMonotonic, stopped);
    }

    /** The same answer counted in launches rather than probes (restart on failure: probes are requests). */
    public Frontier withLaunches(int launches) {
        return new Frontier(
                maxOkTarget, minFailedTarget, bracketRatio, launches, predictedMax, nonMonotonic, stoppedBecause);
    }

    /** The same answer with another reason for stopping. */
    public Frontier withStoppedBecause(String reason) {
        return new Frontier(maxOkTarget, minFailedTarget, bracketRatio, launches, predictedMax, nonMonotonic, reason);
    }

    /** The largest target a probe's hint allows (unaligned), or null when it carries none. */
    static Long hintTarget(Probe probe, long pad, long promptAllowance) {
        if (probe.hintTokens() == null || probe.hintKind() == null) {
            return null;
        }
        long allowance = probe.hintKind() == HintKind.MAX_MODEL_LEN ? pad : promptAllowance;
        return probe.hintTokens() - allowance;
    }

    static boolean isLengthFailure(Probe probe) {
        return !probe.passed() && probe.failure().saysSomethingAboutLength();
    }
}
