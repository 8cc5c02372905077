package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * A step's answer to its pass-key check (docs/results.md#answer): correct, wrong (with what came back), or not
 * checked (with why). A wrong answer is no failure of serving: the step keeps its outcome.
 *
 * @param result {@link #CORRECT}, {@link #WRONG} or {@link #NOT_CHECKED}
 * @param reason why the step was not checked; null otherwise
 * @param keys each measured request's key, where it lay and what came back; empty when not checked
 * @param depths the answer at each of {@code check.depths}, asked on a step that served more than any before it of
 *     its backend (docs/results.md#answer); empty on other steps
 * @param depthsMs the time the depths took after the step's measured requests (tokenizing their needles, sending
 *     their requests); null when none were asked
 */
public record PasskeyAnswer(
        String result,
        @JsonInclude(JsonInclude.Include.NON_NULL) String reason,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Key> keys,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Depth> depths,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double depthsMs) {

    public static final String CORRECT = "correct";
    public static final String WRONG = "wrong";
    public static final String NOT_CHECKED = "not_checked";

    public PasskeyAnswer {
        keys = keys == null ? List.of() : List.copyOf(keys);
        depths = depths == null ? List.of() : List.copyOf(depths);
    }

    /**
     * One measured request's key.
     *
     * @param request the request's index among the measured ones
     * @param depth where the key lay: 0 just after the opening, 1 just before the question
     * @param expected the key
     * @param got the start of what the model answered (up to 64 characters); null when the request got no answer
     */
    public record Key(int request, double depth, String expected, String got, boolean correct) {}

    /**
     * The answer at one depth of {@code check.depths}.
     *
     * @param depth where the key lay: 0 just after the opening, 1 just before the question
     * @param result {@link #CORRECT}, {@link #WRONG} or {@link #NOT_CHECKED}
     * @param reason why it was not checked; null otherwise
     * @param expected the key; null when not checked
     * @param got the start of what the model answered (up to 64 characters); null when not checked
     * @param request the measured request it was read from (the step's own depth needs no request of its own); null
     *     for a request sent for this depth
     */
    public record Depth(
            double depth,
            String result,
            @JsonInclude(JsonInclude.Include.NON_NULL) String reason,
            @JsonInclude(JsonInclude.Include.NON_NULL) String expected,
            @JsonInclude(JsonInclude.Include.NON_NULL) String got,
            @JsonInclude(JsonInclude.Include.NON_NULL) Integer request) {

        /** A key read back or not at {@code depth}. */
        public static Depth answered(double depth, String expected, String got, boolean correct, Integer request) {
            return new Depth(depth, correct ? CORRECT : WRONG, null, expected, got, request);
        }

        /** A depth not checked, for {@code reason}. */
        public static Depth notChecked(double depth, String reason) {
            return new Depth(depth, NOT_CHECKED, reason, null, null, null);
        }

        public boolean correct() {
            return CORRECT.equals(result);
        }
    }

    /** A step whose keys were all read back, or not. */
    public static PasskeyAnswer of(List<Key> keys) {
        boolean all = !keys.isEmpty() && keys.stream().allMatch(Key::correct);
        return new PasskeyAnswer(all ? CORRECT : WRONG, null, keys, List.of(), null);
    }

    /** A step not checked, for {@code reason}. */
    public static PasskeyAnswer notChecked(String reason) {
        return new PasskeyAnswer(NOT_CHECKED, reason, List.of(), List.of(), null);
    }

    /** This answer with the answers at the frontier's depths and the milliseconds they took. */
    public PasskeyAnswer withDepths(List<Depth> answers, double ms) {
        return new PasskeyAnswer(result, reason, keys, answers, ms);
    }

    public boolean correct() {
        return CORRECT.equals(result);
    }

    public boolean wrong() {
        return WRONG.equals(result);
    }

    /** The depths whose key came back wrong, ascending, each once. */
    public List<Double> wrongDepths() {
        return keys.stream()
                .filter(k -> !k.correct())
                .map(Key::depth)
                .distinct()
                .sorted()
                .toList();
    }
}
