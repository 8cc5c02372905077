package dev.ctxprobe.metrics;

import java.util.Arrays;

/** Percentiles exactly as numpy's default ("linear", Hyndman-Fan type 7) computes them. */
public final class Percentiles {

    private Percentiles() {}

    /**
     * The p-th percentile of the samples: rank {@code p/100 * (n-1)} in sorted order, interpolated
     * linearly between the two closest ranks. No samples gives 0.0, as the seeds report it.
     *
     * @param samples the values, sorted or not (not modified)
     * @param p the percentile, 0 to 100
     */
    public static double of(double[] samples, double p) {
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be within [0, 100], got " + p);
        }
        if (samples.length == 0) {
            return 0.0;
        }
        return ofSorted(isSorted(samples) ? samples : sortedCopy(samples), p);
    }

    static double ofSorted(double[] sorted, double p) {
        double rank = p / 100.0 * (sorted.length - 1);
        int below = (int) Math.floor(rank);
        int above = Math.min(below + 1, sorted.length - 1);
        double fraction = rank - below;
        // numpy's _lerp form, so results agree to the last bit where the weights allow it.
        double lo = sorted[below];
        double hi = sorted[above];
        double diff = hi - lo;
        return fraction >= 0.5 ? hi - diff * (1 - fraction) : lo + diff * fraction;
    }

    static double[] sortedCopy(double[] samples) {
        double[] copy = samples.clone();
        Arrays.sort(copy);
        return copy;
    }

    private static boolean isSorted(double[] samples) {
        for (int i = 1; i < samples.length; i++) {
            if (samples[i] < samples[i - 1]) {
                return false;
            }
        }
        return true;
    }
}
