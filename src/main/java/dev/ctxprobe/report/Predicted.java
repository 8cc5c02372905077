package dev.ctxprobe.report;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Frontier;
import java.util.List;

/**
 * What {@code ctxprobe plan} predicted before the first launch ({@code frontier.<backend>.predicted}) against what
 * the run measured, in the words every format shares: the frontier line's note, the rows of a table, CSV cells.
 * Answers without a prediction (the seeds' files, files from before predictions) show nothing.
 */
final class Predicted {
    private Predicted() {}

    static final List<String> HEADERS =
            List.of("backend", "predicted", "set by", "largest passing", "measured - predicted");
    static final List<Boolean> NUMERIC = List.of(false, true, false, true, true);

    /** True when a prediction with a target was recorded for the answer. */
    static boolean has(Frontier f) {
        return f.predicted() != null && f.predicted().target() != null;
    }

    /** True when any answer carries a prediction: the formats add their table then. */
    static boolean any(List<Answer> answers) {
        return answers.stream().anyMatch(a -> has(a.frontier()));
    }

    /** The frontier line's note: {@code predicted 42,496 (KV memory): exact}; empty without a prediction. */
    static String note(Frontier f) {
        if (!has(f)) {
            return "";
        }
        BackendPrediction p = f.predicted();
        String against = against(f);
        return "predicted " + Cells.tokens(p.target()) + " (" + p.bound().label() + ")"
                + (against.isEmpty() ? "" : ": " + against);
    }

    /**
     * How the measured answer lies against the prediction: {@code exact}, {@code +512}, {@code -256} when the search
     * converged; else what the search did show: {@code +512 or more} (it passed above the prediction), {@code too
     * high: 65,536 failed}, or why the prediction was not reached ({@code not reached: full range fits})
     * (docs/results.md#predicted-and-measured).
     */
    static String against(Frontier f) {
        if (!has(f)) {
            return "";
        }
        Long diff = difference(f);
        if (diff != null) {
            return diff == 0 ? "exact" : (diff > 0 ? "+" : "-") + Cells.tokens(Math.abs(diff));
        }
        long predicted = f.predicted().target();
        Long ok = f.maxOkTarget();
        if (ok != null && ok > predicted) {
            return "+" + Cells.tokens(ok - predicted) + " or more";
        }
        if (f.minFailedTarget() != null && f.minFailedTarget() <= predicted) {
            return "too high: " + Cells.tokens(f.minFailedTarget()) + " failed";
        }
        String why = f.stoppedBecause() == null ? "no target above it was tried" : f.stoppedBecause();
        return "not reached: " + TerminalText.line(why);
    }

    /**
     * Measured minus predicted where the search answers it: it converged (a failure above the largest pass, and
     * nothing stopped it early). A prediction the search did not reach (full range fits, interrupted, above {@code
     * frontier.max}) is not scored: null, as is any search that did not converge (only a bound is known then).
     */
    static Long difference(Frontier f) {
        boolean converged = f.stoppedBecause() == null && f.minFailedTarget() != null && f.maxOkTarget() != null;
        return has(f) && converged ? f.maxOkTarget() - f.predicted().target() : null;
    }

    /** One table row per answer that has a prediction. */
    static List<List<String>> rows(List<Answer> answers) {
        return answers.stream()
                .filter(a -> has(a.frontier()))
                .map(a -> List.of(
                        TerminalText.line(a.label()),
                        Cells.tokens(a.frontier().predicted().target()),
                        a.frontier().predicted().bound().label(),
                        Cells.tokens(a.frontier().maxOkTarget()),
                        against(a.frontier())))
                .toList();
    }

    /** The predicted target for a CSV cell; empty without a prediction. */
    static String target(Frontier f) {
        return has(f) ? Long.toString(f.predicted().target()) : "";
    }

    /** What set the predicted target, as the results file names it ({@code kv_memory}); empty without one. */
    static String bound(Frontier f) {
        return has(f) ? f.predicted().bound().id() : "";
    }
}
