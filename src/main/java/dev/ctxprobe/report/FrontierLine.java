package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The one-line answer of a backend, as the console ends a run and every report format leads with it:
 * {@code vllm   max 998,912 tokens (next 1,001,216 fails: kv_insufficient)  5 launches  TTFT 3.7 s}. The cause is
 * the failure class of the step at the smallest failing target (a seed's error sentence when it names none), the
 * TTFT the mean of the step at the largest passing target.
 */
public final class FrontierLine {
    private FrontierLine() {}

    /** The answer led by the backend's name, padded to {@code width} so lines of several backends align. */
    public static String line(String backend, int width, Frontier f, List<Scenario> steps) {
        return backend + " ".repeat(Math.max(0, width - backend.length())) + " " + answer(f, steps);
    }

    /** The answer without the name. */
    public static String answer(Frontier f, List<Scenario> steps) {
        StringBuilder line = new StringBuilder();
        if (f.maxOkTarget() != null) {
            line.append("max ").append(Cells.tokens(f.maxOkTarget())).append(" tokens");
            if (f.minFailedTarget() != null) {
                line.append(" (")
                        .append(f.minFailedTarget() < f.maxOkTarget() ? "smallest failure " : "next ")
                        .append(Cells.tokens(f.minFailedTarget()))
                        .append(" fails")
                        .append(because(cause(f, steps)))
                        .append(')');
            } else if (Frontier.FULL_RANGE_FITS.equals(f.stoppedBecause())) {
                line.append(" (full range fits)");
            }
        } else if (f.minFailedTarget() != null) {
            line.append("nothing fits (smallest tried ")
                    .append(Cells.tokens(f.minFailedTarget()))
                    .append(" fails")
                    .append(because(cause(f, steps)))
                    .append(')');
        } else {
            line.append("no answer");
        }
        line.append("  ").append(f.launches()).append(f.launches() == 1 ? " launch" : " launches");
        Double ttft = ttftAtMaxMs(f, steps);
        if (ttft != null) {
            line.append("  TTFT ").append(Cells.duration(ttft));
        }
        if (!f.nonMonotonic().isEmpty()) {
            line.append("  non-monotonic: ")
                    .append(f.nonMonotonic().stream().map(Cells::tokens).collect(Collectors.joining("; ")))
                    .append(" failed below the max");
        }
        if (f.stoppedBecause() != null
                && !Frontier.FULL_RANGE_FITS.equals(f.stoppedBecause())
                && !Frontier.NOTHING_FITS.equals(f.stoppedBecause())) {
            line.append("  stopped: ").append(Cells.oneLine(f.stoppedBecause()));
        }
        String predicted = Predicted.note(f);
        if (!predicted.isEmpty()) {
            line.append("  ").append(predicted);
        }
        return line.toString();
    }

    /** Why the smallest failing target failed: its class, or a seed's sentence; empty when unknown. */
    static String cause(Frontier f, List<Scenario> steps) {
        if (f.minFailedTarget() == null) {
            return "";
        }
        Scenario failed = last(steps, f.minFailedTarget(), false);
        if (failed == null) {
            return "";
        }
        if (failed.outcome().failure().isPresent()) {
            return failed.outcome().id();
        }
        return failed.error() == null ? "" : Cells.oneLine(failed.error());
    }

    /** The mean TTFT at the largest passing target, or null. */
    static Double ttftAtMaxMs(Frontier f, List<Scenario> steps) {
        if (f.maxOkTarget() == null) {
            return null;
        }
        Scenario ok = last(steps, f.maxOkTarget(), true);
        if (ok == null || ok.metrics() == null || ok.metrics().ttftMs() == null) {
            return null;
        }
        double mean = ok.metrics().ttftMs().mean();
        return Double.isFinite(mean) ? mean : null;
    }

    // A resumed run may repeat a target: the last launched step with that success counts.
    private static Scenario last(List<Scenario> steps, long target, boolean success) {
        Scenario found = null;
        for (Scenario s : steps) {
            if (s.targetLen() == target && s.success() == success && s.outcome().launched()) {
                found = s;
            }
        }
        return found;
    }

    private static String because(String cause) {
        return cause.isEmpty() ? "" : ": " + cause;
    }
}
