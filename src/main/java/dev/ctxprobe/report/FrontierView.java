package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One backend's answer as every format leads with it: the frontier, the cause of the failure that bounds
 * it and the TTFT at the largest passing length, looked up in that input's steps.
 */
record FrontierView(String label, ResultSet set, FrontierSummary frontier, String failureCause, Double ttftAtMaxMs) {

    static List<FrontierView> of(List<ResultSet> sets, Labels labels) {
        List<FrontierView> views = new ArrayList<>();
        for (ResultSet set : sets) {
            for (FrontierSummary f : set.frontiers()) {
                String cause = f.minFailedTarget() == null
                        ? ""
                        : set.step(f.backend(), f.minFailedTarget(), false)
                                .map(ScenarioRow::cause)
                                .orElse("");
                Double ttft = f.maxOkTarget() == null
                        ? null
                        : set.step(f.backend(), f.maxOkTarget(), true)
                                .flatMap(ScenarioRow::ttftMeanMs)
                                .orElse(null);
                views.add(new FrontierView(labels.of(set, f.backend()), set, f, cause, ttft));
            }
        }
        return views;
    }

    /** True when the smallest failure lies below the largest pass (fit is not monotonic, spec 05). */
    boolean failureBelowMax() {
        return frontier.minFailedTarget() != null
                && frontier.maxOkTarget() != null
                && frontier.minFailedTarget() < frontier.maxOkTarget();
    }

    /** {@code max 917,504 tokens}, or what is known when nothing passed. */
    String maxText() {
        if (frontier.maxOkTarget() != null) {
            return "max " + Cells.tokens(frontier.maxOkTarget()) + " tokens";
        }
        return frontier.minFailedTarget() == null ? "no steps yet" : "nothing passed";
    }

    /** {@code next 1,048,576 fails: kv_insufficient}, or empty when nothing failed. */
    String failureText() {
        if (frontier.minFailedTarget() == null) {
            return frontier.maxOkTarget() == null ? "" : "no failure";
        }
        String where = failureBelowMax() ? "smallest failure " : frontier.maxOkTarget() == null ? "" : "next ";
        String text = where + Cells.tokens(frontier.minFailedTarget()) + " fails";
        return failureCause.isEmpty() ? text : text + ": " + Cells.oneLine(failureCause);
    }

    /** {@code 9 launches}. */
    String launchesText() {
        return frontier.launches() + (frontier.launches() == 1 ? " launch" : " launches");
    }

    /** {@code TTFT 3.7 s} at the largest passing length, or empty. */
    String ttftText() {
        return ttftAtMaxMs == null || !Double.isFinite(ttftAtMaxMs) ? "" : "TTFT " + Cells.duration(ttftAtMaxMs);
    }

    /** The targets that failed below a pass, e.g. {@code 29,184, 30,208}; empty when fit was monotonic. */
    String nonMonotonicText() {
        return frontier.nonMonotonic().stream().map(Cells::tokens).collect(Collectors.joining(", "));
    }

    /** The one-line answer without the label: {@code max 917,504 tokens (next ... fails: ...)  9 launches  TTFT 3.7 s}. */
    String line() {
        StringBuilder out = new StringBuilder(maxText());
        String failure = failureText();
        if (!failure.isEmpty()) {
            out.append(" (").append(failure).append(')');
        }
        out.append("  ").append(launchesText());
        String ttft = ttftText();
        if (!ttft.isEmpty()) {
            out.append("  ").append(ttft);
        }
        if (frontier.predictedMax() != null) {
            out.append("  predicted max ").append(Cells.tokens(frontier.predictedMax()));
        }
        if (!frontier.nonMonotonic().isEmpty()) {
            out.append("  non-monotonic: fails at ").append(nonMonotonicText());
        }
        if (frontier.mode() != null && !frontier.mode().isEmpty()) {
            out.append("  mode ").append(Cells.oneLine(frontier.mode()));
        }
        return out.toString();
    }
}
