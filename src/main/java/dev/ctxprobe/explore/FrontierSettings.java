package dev.ctxprobe.explore;

import dev.ctxprobe.experiment.Defaults;

/**
 * Bounds, precision and budget of a {@code frontier} search.
 *
 * <p>{@code min} and {@code max} need not be multiples of {@code align}: the search stays inside
 * them, from {@link #lowestTarget()} ({@code min} aligned up) to {@link #highestTarget()} ({@code
 * max} aligned down), because a user who writes {@code max: 1000000} means "up to a million", not
 * "reject my file". Only a range that holds no aligned target is rejected.
 *
 * @param min smallest target to probe (tokens)
 * @param max largest target to probe (tokens), probed first
 * @param precision relative width of the final bracket, e.g. 0.01
 * @param align every target is a multiple of this, e.g. 256
 * @param maxLaunches most probes for one backend
 * @param pad {@code context_pad}: the server's max_model_len is target + pad
 * @param promptAllowance the largest prompt is {@code hint - promptAllowance} for a {@link
 *     dev.ctxprobe.results.HintKind#PROMPT_LEN} hint (1 for SGLang and llama.cpp)
 */
public record FrontierSettings(
        long min, long max, double precision, long align, int maxLaunches, long pad, long promptAllowance) {

    public FrontierSettings {
        if (align <= 0) {
            throw new IllegalArgumentException("frontier align must be a positive number of tokens (default "
                    + Defaults.ALIGN + "), got " + align);
        }
        if (min <= 0) {
            throw new IllegalArgumentException(
                    "frontier min must be a positive number of tokens, e.g. 65536, got " + min);
        }
        if (max < min) {
            throw new IllegalArgumentException(
                    "frontier max (" + max + ") is below min (" + min + "): write a max of at least " + min);
        }
        if (Math.ceilDiv(min, align) > Math.floorDiv(max, align)) {
            throw new IllegalArgumentException("no multiple of align " + align + " lies between frontier min " + min
                    + " and max " + max + ": widen the range or lower align");
        }
        if (!(precision > 0) || Double.isInfinite(precision)) {
            throw new IllegalArgumentException(
                    "frontier precision must be a positive fraction such as 0.01 (1 %), got " + precision);
        }
        if (maxLaunches < 1) {
            throw new IllegalArgumentException("frontier max_launches must be at least 1 (default "
                    + Defaults.MAX_LAUNCHES + "), got " + maxLaunches);
        }
        if (pad < 0) {
            throw new IllegalArgumentException("context_pad must not be negative, got " + pad);
        }
        if (Math.floorDiv(max, align) * align > Long.MAX_VALUE - pad) {
            throw new IllegalArgumentException("frontier max " + max + " plus context_pad " + pad
                    + " overflows max_model_len: lower max or the pad");
        }
        if (promptAllowance < 0) {
            throw new IllegalArgumentException("prompt allowance must not be negative, got " + promptAllowance);
        }
    }

    /** The same search with {@code max} lowered to {@code tokens}. */
    FrontierSettings withMax(long tokens) {
        return new FrontierSettings(min, tokens, precision, align, maxLaunches, pad, promptAllowance);
    }

    /** The smallest target the search may probe: {@code min} aligned up. */
    public long lowestTarget() {
        return Math.ceilDiv(min, align) * align;
    }

    /** The largest target the search may probe, and its first probe: {@code max} aligned down. */
    public long highestTarget() {
        return alignDown(max);
    }

    long alignDown(long tokens) {
        return Math.floorDiv(tokens, align) * align;
    }
}
