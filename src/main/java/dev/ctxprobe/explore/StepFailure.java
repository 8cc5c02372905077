package dev.ctxprobe.explore;

import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;

/**
 * A classified failure of one step, before it is written: class, phase, a one-line detail and the evidence.
 *
 * @param maxContextHint a capacity the failure named, or null
 * @param kvCapacityTokens a KV capacity the failure named, or null
 * @param hintKind what {@code maxContextHint} limits when its rule knows better than the profile, else null
 */
record StepFailure(
        FailureClass failureClass,
        Phase phase,
        String detail,
        List<String> evidence,
        Integer exitCode,
        Long maxContextHint,
        Long kvCapacityTokens,
        HintKind hintKind) {

    StepFailure {
        evidence = evidence.stream().limit(12).map(StepFailure::trim).toList();
    }

    static StepFailure of(FailureClass c, Phase phase, String detail, List<String> evidence) {
        return new StepFailure(c, phase, detail, evidence, null, null, null, null);
    }

    StepFailure withExitCode(Integer code) {
        return new StepFailure(failureClass, phase, detail, evidence, code, maxContextHint, kvCapacityTokens, hintKind);
    }

    /** This failure steering the search by {@code hint}, which limits {@code kind} (null: the profile's kind). */
    StepFailure withHint(Long hint, HintKind kind) {
        return new StepFailure(failureClass, phase, detail, evidence, exitCode, hint, kvCapacityTokens, kind);
    }

    /** This failure with more to say in its detail. */
    StepFailure withDetail(String more) {
        return new StepFailure(
                failureClass, phase, detail + more, evidence, exitCode, maxContextHint, kvCapacityTokens, hintKind);
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
