package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A step's prefill against the hardware's floor (docs/results.md, "% of roofline"): the floor is the time the
 * prompt's FLOPs take at the devices' dense peak, {@code percent} is the floor over the measured TTFT. Above the best
 * published prefill efficiency the step is {@code suspect}, above 100% {@code impossible} under the assumption used.
 *
 * @param percent the headline floor over the mean TTFT, in percent; null when the floor is unknown
 * @param flag {@code plausible}, {@code suspect} or {@code impossible}; null when the floor is unknown
 * @param floorS the headline floor in seconds: every part of the model counted, at the fastest dtype listed
 * @param assumption what the headline floor assumes, in words
 * @param floors the floor under each assumption that matters (dtype of the math, parts counted)
 * @param unknown why there is no floor, null when there is one
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Roofline(
        Double percent, String flag, Double floorS, String assumption, List<Floor> floors, String unknown) {

    /** The best published long-context prefills reach about 75% of peak (docs/results.md): above 80% is suspect. */
    public static final double SUSPECT_PERCENT = 80;

    public static final double IMPOSSIBLE_PERCENT = 100;

    public static final String PLAUSIBLE = "plausible";
    public static final String SUSPECT = "suspect";
    public static final String IMPOSSIBLE = "impossible";

    public Roofline {
        floors = floors == null ? List.of() : List.copyOf(floors);
    }

    /** No floor, and why. */
    public static Roofline unknown(String why) {
        return new Roofline(null, null, null, null, List.of(), why);
    }

    /** The flag of a measurement at {@code percent} of its floor. */
    public static String flagOf(double percent) {
        if (percent > IMPOSSIBLE_PERCENT) {
            return IMPOSSIBLE;
        }
        return percent > SUSPECT_PERCENT ? SUSPECT : PLAUSIBLE;
    }

    /** True when the headline is suspect or impossible. */
    public boolean flagged() {
        return SUSPECT.equals(flag) || IMPOSSIBLE.equals(flag);
    }

    /**
     * The floor under one assumption.
     *
     * @param dtype the dtype of the math whose peak is used ({@code fp8}, {@code bf16}, {@code fp32})
     * @param counted the parts of the model counted, e.g. {@code linear+attention+indexer}
     * @param peakTflops one device's dense peak for that dtype
     * @param devices the devices the prefill is divided over
     * @param flops the prefill's FLOPs under this assumption
     * @param floorS flops over devices times peak
     * @param percent the floor over the measured TTFT, in percent; null before a measurement
     * @param flag as {@link Roofline#flag}; null before a measurement
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Floor(
            String dtype,
            String counted,
            double peakTflops,
            int devices,
            double flops,
            double floorS,
            Double percent,
            String flag) {

        /** This floor against a TTFT of {@code seconds}. */
        public Floor measured(double seconds) {
            double p = floorS / seconds * 100;
            return new Floor(dtype, counted, peakTflops, devices, flops, floorS, p, flagOf(p));
        }

        /** The assumption in words: {@code FP8 peak 1,979 TFLOPS x 8, linear+attention+indexer}. */
        public String assumption() {
            // A CPU's peak is a fraction of a TFLOPS: in GFLOPS it keeps its digits.
            String peak = peakTflops < 10
                    ? String.format(java.util.Locale.ROOT, "%,.1f GFLOPS", peakTflops * 1000)
                    : String.format(java.util.Locale.ROOT, "%,.0f TFLOPS", peakTflops);
            return dtype.toUpperCase(java.util.Locale.ROOT) + " peak " + peak + " x " + devices + ", " + counted;
        }
    }
}
