package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The frontier predicted for one backend before anything is launched.
 *
 * @param target the largest target (prompt tokens) predicted to be served, a multiple of {@code align}; null when
 *     none fits or when no bound is known
 * @param bound what sets it: the rule the next aligned target breaks
 * @param summary one sentence saying the answer and why
 * @param largestTarget the largest target that fits before alignment; null with {@code target}
 * @param align the frontier's alignment the target is a multiple of
 * @param contextPad tokens added to the target for the server's context length
 * @param kv the KV memory arithmetic at the predicted target (or at the first failing one); null when not sized
 * @param arithmetic the computation as lines a user can follow
 * @param inputs every value used, with its source
 * @param missing inputs that were needed and not found: the checks they feed were left out
 * @param assumptions defaults assumed and what is not modelled
 * @param prefillFloor the least time a prefill can take on the backend's devices (docs/results.md, "% of
 *     roofline"); null in files written before it was recorded
 * @param surface the capacity map predicted from the engine's capacity arithmetic, one level per {@code
 *     sweep.concurrency} above 1 (docs/plan.md#the-capacity-map); empty without
 */
public record BackendPrediction(
        String backend,
        String engine,
        Long target,
        Bound bound,
        String summary,
        Long largestTarget,
        long align,
        long contextPad,
        KvFit kv,
        List<String> arithmetic,
        List<Input> inputs,
        List<Missing> missing,
        List<String> assumptions,
        @JsonInclude(JsonInclude.Include.NON_NULL) PrefillFloor prefillFloor,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Level> surface) {

    /** Lists a results file leaves out read as empty. */
    public BackendPrediction {
        arithmetic = arithmetic == null ? List.of() : List.copyOf(arithmetic);
        inputs = inputs == null ? List.of() : List.copyOf(inputs);
        missing = missing == null ? List.of() : List.copyOf(missing);
        assumptions = assumptions == null ? List.of() : List.copyOf(assumptions);
        surface = surface == null ? List.of() : List.copyOf(surface);
    }

    /**
     * One level of the predicted capacity map: the largest target that {@code concurrency} requests are predicted
     * to hold at once, aligned down to {@code align}.
     *
     * @param target the predicted target, or null when none is held at once (more requests than slots)
     * @param why the arithmetic in words: {@code KV pool 14,000 / 2 - 16 output}, {@code more requests than 4
     *     slots}
     */
    public record Level(int concurrency, Long target, String why) {}

    /** A prediction with a prefill floor and without a capacity map. */
    public BackendPrediction(
            String backend,
            String engine,
            Long target,
            Bound bound,
            String summary,
            Long largestTarget,
            long align,
            long contextPad,
            KvFit kv,
            List<String> arithmetic,
            List<Input> inputs,
            List<Missing> missing,
            List<String> assumptions,
            PrefillFloor prefillFloor) {
        this(
                backend,
                engine,
                target,
                bound,
                summary,
                largestTarget,
                align,
                contextPad,
                kv,
                arithmetic,
                inputs,
                missing,
                assumptions,
                prefillFloor,
                List.of());
    }

    /** A prediction without a prefill floor. */
    public BackendPrediction(
            String backend,
            String engine,
            Long target,
            Bound bound,
            String summary,
            Long largestTarget,
            long align,
            long contextPad,
            KvFit kv,
            List<String> arithmetic,
            List<Input> inputs,
            List<Missing> missing,
            List<String> assumptions) {
        this(
                backend,
                engine,
                target,
                bound,
                summary,
                largestTarget,
                align,
                contextPad,
                kv,
                arithmetic,
                inputs,
                missing,
                assumptions,
                null);
    }

    /** This prediction with the backend's prefill floor. */
    public BackendPrediction withPrefillFloor(PrefillFloor floor) {
        return new BackendPrediction(
                backend,
                engine,
                target,
                bound,
                summary,
                largestTarget,
                align,
                contextPad,
                kv,
                arithmetic,
                inputs,
                missing,
                assumptions,
                floor,
                surface);
    }

    /** This prediction with one more assumption said. */
    public BackendPrediction withAssumption(String text) {
        List<String> all = new java.util.ArrayList<>(assumptions);
        all.add(text);
        return new BackendPrediction(
                backend,
                engine,
                target,
                bound,
                summary,
                largestTarget,
                align,
                contextPad,
                kv,
                arithmetic,
                inputs,
                missing,
                all,
                prefillFloor,
                surface);
    }

    /** This prediction with its capacity map. */
    public BackendPrediction withSurface(List<Level> levels) {
        return new BackendPrediction(
                backend,
                engine,
                target,
                bound,
                summary,
                largestTarget,
                align,
                contextPad,
                kv,
                arithmetic,
                inputs,
                missing,
                assumptions,
                prefillFloor,
                levels);
    }
}
