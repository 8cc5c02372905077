package dev.ctxprobe.report;

import dev.ctxprobe.engine.FailureClass;
import java.util.List;

/**
 * The answer for one backend (spec 05): the largest target that passed, the smallest that failed, and
 * what it cost. Read from the file's {@code frontier} section, or derived from the steps ({@code derived})
 * for files without one, such as the seeds. Unknown values are null.
 */
public record FrontierSummary(
        String backend,
        Long maxOkTarget,
        Long minFailedTarget,
        Double bracketRatio,
        int launches,
        Long predictedMax,
        List<Long> nonMonotonic,
        String mode,
        boolean derived) {

    public FrontierSummary {
        nonMonotonic = List.copyOf(nonMonotonic);
    }

    /**
     * The frontier the steps of one backend show: the largest passing target, the smallest failure above it
     * that says something about length (as the search reports it), failures below a pass as non-monotonic, and
     * every launched step counted.
     */
    static FrontierSummary derive(String backend, List<ScenarioRow> rows) {
        Long maxOk = null;
        int launches = 0;
        for (ScenarioRow row : rows) {
            if (!row.launched()) {
                continue;
            }
            launches++;
            if (row.success()) {
                maxOk = maxOk == null ? row.targetLen() : Math.max(maxOk, row.targetLen());
            }
        }
        Long okBound = maxOk;
        Long minFailed = rows.stream()
                .filter(r -> r.launched() && !r.success() && failureSaysSomethingAboutLength(r))
                .map(ScenarioRow::targetLen)
                .filter(t -> okBound == null || t > okBound)
                .min(Long::compare)
                .orElse(null);
        List<Long> nonMonotonic = rows.stream()
                .filter(r -> r.launched() && !r.success() && failureSaysSomethingAboutLength(r))
                .map(ScenarioRow::targetLen)
                .filter(t -> okBound != null && t < okBound)
                .distinct()
                .sorted()
                .toList();
        Double ratio =
                maxOk != null && minFailed != null && minFailed > maxOk ? (double) (minFailed - maxOk) / maxOk : null;
        return new FrontierSummary(backend, maxOk, minFailed, ratio, launches, null, nonMonotonic, null, true);
    }

    /**
     * Port or accelerator busy, a ctxprobe bug, a Ctrl-C: these failures do not bound the length (spec 05).
     * The seeds carry only an error sentence, so every failure there counts as a failure at its length.
     */
    private static boolean failureSaysSomethingAboutLength(ScenarioRow row) {
        return row.failureClass().map(FailureClass::saysSomethingAboutLength).orElse(true);
    }
}
