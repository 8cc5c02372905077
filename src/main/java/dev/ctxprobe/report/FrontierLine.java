package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.PasskeyAnswer;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
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

    /**
     * The capacity map under the answer (docs/search.md#the-capacity-map), one line per concurrency above 1, its
     * {@code xN} where the answer has the backend's name: {@code x4  max 3,840 tokens held at once (next 4,096
     * fails: not_concurrent)  TTFT 0.9 s (max 1.1 s)  predicted 4,080}. Empty for a backend without a map.
     */
    public static List<String> surface(int width, Frontier f, List<Scenario> steps) {
        List<String> lines = new java.util.ArrayList<>();
        for (Frontier.Surface level : f.surface()) {
            String label = "  x" + level.concurrency();
            StringBuilder line = new StringBuilder(label)
                    .append(" ".repeat(Math.max(0, width - label.length())))
                    .append(' ');
            String cause = level.cause() == null ? "" : ": " + level.cause();
            if (level.detail() != null && level.cause() != null && level.cause().equals("not_concurrent")) {
                cause += " ("
                        + TerminalText.line(level.detail().replaceFirst("^all \\d+ requests were served, but ", ""))
                        + ")";
            }
            if (level.maxOkTarget() != null) {
                line.append("max ").append(Cells.tokens(level.maxOkTarget())).append(" tokens held at once");
                if (level.minFailedTarget() != null) {
                    line.append(" (next ")
                            .append(Cells.tokens(level.minFailedTarget()))
                            .append(" fails")
                            .append(cause)
                            .append(')');
                } else if (Frontier.FULL_RANGE_FITS.equals(level.stoppedBecause())) {
                    line.append(" (up to the single-prompt frontier)");
                }
            } else if (level.minFailedTarget() != null) {
                line.append("nothing held at once (smallest tried ")
                        .append(Cells.tokens(level.minFailedTarget()))
                        .append(" fails")
                        .append(cause)
                        .append(')');
            } else if (level.detail() != null) {
                // More requests than the server states it runs together: decided without sending.
                line.append("nothing held at once (")
                        .append(TerminalText.line(level.detail()))
                        .append(')');
            } else {
                line.append("no answer");
            }
            Scenario held = level.maxOkTarget() == null
                    ? null
                    : last(at(steps, level.concurrency()), level.maxOkTarget(), true);
            if (held != null && held.metrics() != null && held.metrics().ttftMs() != null) {
                line.append("  TTFT ")
                        .append(Cells.duration(held.metrics().ttftMs().p50()));
                if (held.metrics().ttftMs().max() != null) {
                    line.append(" (max ")
                            .append(Cells.duration(held.metrics().ttftMs().max()))
                            .append(')');
                }
            }
            if (level.predictedTarget() != null) {
                line.append("  predicted ").append(Cells.tokens(level.predictedTarget()));
            }
            String states = states(statement(steps, level.concurrency()));
            if (!states.isEmpty()) {
                line.append("  engine states ").append(states);
            }
            lines.add(line.toString());
        }
        return lines;
    }

    /**
     * What the level's server stated about the requests it holds at once: the latest statement of the level's steps,
     * else of the single-prompt steps (the server the level was searched on was launched by them); null for none.
     */
    static ServedCapacity statement(List<Scenario> steps, int concurrency) {
        ServedCapacity found = null;
        for (int n : new int[] {1, concurrency}) {
            for (Scenario s : at(steps, n)) {
                if (s.server() != null
                        && s.server().capacity() != null
                        && !states(s.server().capacity()).isEmpty()) {
                    found = s.server().capacity();
                }
            }
        }
        return found;
    }

    /**
     * The engine's own statement of the requests it holds at once, in its words: vLLM's {@code 2.41x of 32,768
     * tokens} (its maximum concurrency line), SGLang's {@code max_running_requests 4,096, pool 19,660 tokens},
     * llama.cpp's {@code 4 slots, unified 16,384} or {@code 4 slots of 4,096}; empty when it stated none.
     */
    static String states(ServedCapacity c) {
        if (c == null) {
            return "";
        }
        List<String> parts = new java.util.ArrayList<>();
        if (c.maxConcurrency() != null) {
            parts.add(String.format(java.util.Locale.ROOT, "%.2fx", c.maxConcurrency())
                    + (c.contextTokens() == null ? "" : " of " + Cells.tokens(c.contextTokens()) + " tokens"));
        }
        if (c.maxRunningRequests() != null) {
            parts.add("max_running_requests " + Cells.tokens((long) c.maxRunningRequests())
                    + (c.kvTokens() == null ? "" : ", pool " + Cells.tokens(c.kvTokens()) + " tokens"));
        }
        if (c.slots() != null) {
            String slots = c.slots() + (c.slots() == 1 ? " slot" : " slots");
            if (c.contextTokens() != null) {
                slots += Boolean.TRUE.equals(c.kvUnified())
                        ? ", unified " + Cells.tokens(c.contextTokens())
                        : " of " + Cells.tokens(c.contextTokens());
            }
            parts.add(slots);
        }
        return String.join("; ", parts);
    }

    /** The steps of one concurrency. */
    static List<Scenario> at(List<Scenario> steps, int concurrency) {
        return steps.stream().filter(s -> s.concurrency() == concurrency).toList();
    }

    /** The answer without the name. */
    public static String answer(Frontier f, List<Scenario> allSteps) {
        // The single-prompt answer reads single-prompt steps: the map's probe at the same target is another point.
        List<Scenario> steps = at(allSteps, 1);
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
        line.append(answeredCorrectly(f.correct())).append(byDepth(f.correct()));
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
            line.append("  stopped: ").append(TerminalText.line(f.stoppedBecause()));
        }
        String predicted = Predicted.note(f);
        if (!predicted.isEmpty()) {
            line.append("  ").append(predicted);
        }
        return line.toString();
    }

    /**
     * The frontier of right answers beside the served one (docs/search.md#the-frontier-of-right-answers), as {@code ;
     * answered correctly up to 65,536 (next 65,792 wrong)}; empty for a backend not checked.
     */
    static String answeredCorrectly(Frontier.Correct c) {
        if (c == null) {
            return "";
        }
        if (c.maxCorrectTarget() == null && c.minWrongTarget() == null) {
            return "; answered correctly: not checked"
                    + (c.notCheckedReason() == null ? "" : " (" + TerminalText.line(c.notCheckedReason()) + ")");
        }
        String wrong = c.minWrongTarget() == null ? "" : Cells.tokens(c.minWrongTarget()) + " wrong";
        if (c.maxCorrectTarget() == null) {
            return "; answered correctly: none (" + wrong + ")";
        }
        return "; answered correctly up to " + Cells.tokens(c.maxCorrectTarget())
                + (wrong.isEmpty() ? "" : " (next " + wrong + ")");
    }

    /**
     * The answers at {@code check.depths} where they were asked, as {@code ; at 39,680 by depth: 0.1 wrong, 0.5 wrong,
     * 0.9 correct}; empty when no step asked them.
     */
    static String byDepth(Frontier.Correct c) {
        if (c == null || c.atFrontier() == null) {
            return "";
        }
        StringBuilder out = new StringBuilder("; at ")
                .append(Cells.tokens(c.atFrontier().target()))
                .append(" by depth:");
        String sep = " ";
        for (PasskeyAnswer.Depth d : c.atFrontier().depths()) {
            out.append(sep).append(d.depth()).append(' ').append(d.result().replace('_', ' '));
            sep = ", ";
        }
        return out.toString();
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
        return failed.error() == null ? "" : TerminalText.line(failed.error());
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
    static Scenario last(List<Scenario> steps, long target, boolean success) {
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
