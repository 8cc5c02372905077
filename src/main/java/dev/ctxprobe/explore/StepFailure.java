package dev.ctxprobe.explore;

import dev.ctxprobe.engine.Capacity;
import dev.ctxprobe.engine.Diagnosis;
import dev.ctxprobe.engine.Limit;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.results.FailureClass;
import java.util.List;

/**
 * A classified failure of one step, before it is written: class, phase, a one-line detail and the evidence.
 *
 * @param named the limit and the KV capacity the failure named, each null where it named none
 * @param verdictS seconds from the cause to a verdict reached while the server still ran, else null
 */
record StepFailure(
        FailureClass failureClass,
        Phase phase,
        String detail,
        List<String> evidence,
        Integer exitCode,
        Capacity named,
        Double verdictS) {

    StepFailure {
        evidence = evidence.stream().limit(12).map(StepFailure::trim).toList();
    }

    static StepFailure of(FailureClass c, Phase phase, String detail, List<String> evidence) {
        return new StepFailure(c, phase, detail, evidence, null, Capacity.NONE, null);
    }

    /** What the engine's profile diagnosed, in {@code phase}; {@code exitCode} null while the server runs. */
    static StepFailure of(Diagnosis d, Phase phase, Integer exitCode) {
        return new StepFailure(d.failureClass(), phase, d.detail(), d.evidence(), exitCode, d.named(), null);
    }

    StepFailure withExitCode(Integer code) {
        return new StepFailure(failureClass, phase, detail, evidence, code, named, verdictS);
    }

    /** This failure steering the search by {@code limit}. */
    StepFailure withLimit(Limit limit) {
        return new StepFailure(
                failureClass,
                phase,
                detail,
                evidence,
                exitCode,
                new Capacity(named.kvCapacityTokens(), limit),
                verdictS);
    }

    /** This failure with more to say in its detail. */
    StepFailure withDetail(String more) {
        return new StepFailure(failureClass, phase, detail + more, evidence, exitCode, named, verdictS);
    }

    /** This failure as a verdict reached {@code after} its cause, while the server still ran. */
    StepFailure withVerdict(java.time.Duration after) {
        return new StepFailure(failureClass, phase, detail, evidence, exitCode, named, after.toMillis() / 1000.0);
    }

    private static String trim(String line) {
        return line.length() <= 400 ? line : line.substring(0, 400) + " [...]";
    }

    /** The seeds' {@code error}: one sentence naming where it failed and why. */
    String sentence() {
        if (failureClass == FailureClass.INTERRUPTED || failureClass == FailureClass.CLIENT_ERROR) {
            return detail;
        }
        String where = switch (phase) {
            case PREFLIGHT -> "not launched";
            case STARTUP, READINESS -> "server failed to start";
            case WARMUP -> "warm-up request failed";
            case MEASURE -> "request failed";
            case SHUTDOWN -> "server did not stop";
        };
        return where + ": " + detail;
    }
}
