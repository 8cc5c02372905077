package dev.ctxprobe.metrics;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.util.Collection;

/**
 * Summary of one latency sample set in milliseconds: the seeds' keys (mean and four percentiles)
 * followed by the added ones (sample count, population standard deviation, extremes).
 *
 * <p>The added ones are null in a stats object read from a seed, which has only the seeds' keys: unknown, not
 * zero. ctxprobe always computes them, so it always writes them; a null one is left out rather than written as
 * {@code null}, so a seed's object keeps its own shape.
 */
@JsonPropertyOrder({"mean", "p50", "p90", "p95", "p99", "count", "std", "min", "max"})
public record Stats(
        double mean,
        double p50,
        double p90,
        double p95,
        double p99,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer count,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double std,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double min,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double max) {

    /** The value for no samples: zeros everywhere, as the seeds write TPOT and ITL for one output token. */
    public static final Stats EMPTY = new Stats(0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0);

    public static Stats of(double[] samples) {
        if (samples.length == 0) {
            return EMPTY;
        }
        double[] sorted = Percentiles.sortedCopy(samples);
        double sum = 0;
        for (double v : sorted) {
            sum += v;
        }
        double mean = sum / sorted.length;
        double squares = 0;
        for (double v : sorted) {
            squares += (v - mean) * (v - mean);
        }
        return new Stats(
                mean,
                Percentiles.ofSorted(sorted, 50),
                Percentiles.ofSorted(sorted, 90),
                Percentiles.ofSorted(sorted, 95),
                Percentiles.ofSorted(sorted, 99),
                sorted.length,
                Math.sqrt(squares / sorted.length),
                sorted[0],
                sorted[sorted.length - 1]);
    }

    public static Stats of(Collection<Double> samples) {
        return of(samples.stream().mapToDouble(Double::doubleValue).toArray());
    }
}
