package dev.ctxprobe.report;

import dev.ctxprobe.engine.FailureClass;
import java.util.Arrays;
import java.util.Optional;

/**
 * One step of a results file: the seeds' keys ({@code max_model_len} or the P800 seed's {@code
 * max_context_len}) and ctxprobe's optional extensions; unknown values are null.
 *
 * @param outcome {@code ok}, a failure class id, or, for files without the key, {@code ok} / {@code failed}
 */
public record ScenarioRow(
        String backend,
        long targetLen,
        Long maxModelLen,
        boolean success,
        String outcome,
        String error,
        String serverArgs,
        StepMetrics metrics,
        StepFailure failure,
        ServerInfo server,
        Verification verification,
        String log) {

    /** The outcome of a step of the {@code list} strategy that was never launched. */
    public static final String SKIPPED = "skipped";

    /** The outcome written for a failed step of a file without ctxprobe's {@code outcome} key. */
    public static final String FAILED = "failed";

    /** True when the step was launched (a skipped step is listed but never ran). */
    public boolean launched() {
        return !SKIPPED.equals(outcome);
    }

    /** Why the step failed in one word or sentence: the failure class if known, else the seed's error text. */
    public String cause() {
        if (failure != null && failure.failureClass() != null) {
            return failure.failureClass();
        }
        if (!success && !FAILED.equals(outcome) && !SKIPPED.equals(outcome)) {
            return outcome;
        }
        return error == null ? "" : error;
    }

    /** The human sentence for a failed step: the seed's {@code error}, else the failure's detail. */
    public String explanation() {
        if (error != null && !error.isEmpty()) {
            return error;
        }
        return failure == null || failure.detail() == null ? "" : failure.detail();
    }

    /** The failure class of a failed step, when the file names one ctxprobe knows. */
    public Optional<FailureClass> failureClass() {
        String id = cause();
        return Arrays.stream(FailureClass.values())
                .filter(c -> c.id().equals(id))
                .findFirst();
    }

    /** The mean TTFT in milliseconds of a step that measured one. */
    public Optional<Double> ttftMeanMs() {
        return Optional.ofNullable(metrics)
                .map(StepMetrics::ttftMs)
                .map(Stats::mean)
                .filter(v -> success);
    }
}
