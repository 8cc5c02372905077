package dev.ctxprobe.results;

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
        List<String> assumptions) {

    /** Lists a results file leaves out read as empty. */
    public BackendPrediction {
        arithmetic = arithmetic == null ? List.of() : List.copyOf(arithmetic);
        inputs = inputs == null ? List.of() : List.copyOf(inputs);
        missing = missing == null ? List.of() : List.copyOf(missing);
        assumptions = assumptions == null ? List.of() : List.copyOf(assumptions);
    }
}
