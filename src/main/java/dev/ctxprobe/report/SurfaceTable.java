package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import java.util.ArrayList;
import java.util.List;

/**
 * The capacity map as a table (docs/search.md#the-capacity-map, docs/results.md#reading-results): per backend one row
 * per concurrency N, the single-prompt answer as N = 1 and each {@code frontier.<backend>.surface} level above it.
 * Formats add it only when some answer has a map, so a run of single prompts reads as before. The cause comes last:
 * its detail is a sentence, and in a text table only the last column needs no padding.
 */
final class SurfaceTable {
    private SurfaceTable() {}

    /**
     * One row of the map.
     *
     * @param n the requests sent at once
     * @param maxOk the largest target held at once (for N = 1: served), or null
     * @param minFailed the smallest target above it that was not, or null
     * @param cause its failure class, with the detail of a {@code not_concurrent} level; empty when unknown
     * @param launches servers this level launched (for N = 1: the single-prompt search's)
     * @param held the step at {@code maxOk}, whose TTFT the row shows; null without
     * @param stated the largest target the engine's own statement allows at N: for N = 1 the limit it named
     *     ({@code predicted_max}), above 1 the level's {@code predicted_target} where the single-prompt servers
     *     stated their KV pool or slots; null where the engine stated nothing
     */
    record Level(int n, Long maxOk, Long minFailed, String cause, int launches, Scenario held, Long stated) {}

    /** True when any answer has a capacity map: only then do the formats show it. */
    static boolean any(List<Answer> answers) {
        return answers.stream().anyMatch(SurfaceTable::hasMap);
    }

    /** True when the answer has levels above one request at once, or steps there (a run still going). */
    static boolean hasMap(Answer a) {
        return !a.frontier().surface().isEmpty() || a.steps().stream().anyMatch(s -> s.concurrency() > 1);
    }

    /** The answer's levels by N, ascending; empty for an answer without a map. */
    static List<Level> levels(Answer a) {
        if (!hasMap(a)) {
            return List.of();
        }
        List<Scenario> single = FrontierLine.at(a.steps(), 1);
        // A file still being written has no frontier section yet: N = 1 is what its single prompts show.
        Frontier f = a.derived() ? Frontier.ofSteps(single) : a.frontier();
        List<Level> levels = new ArrayList<>();
        levels.add(new Level(
                1,
                f.maxOkTarget(),
                f.minFailedTarget(),
                FrontierLine.cause(f, single),
                f.launches(),
                f.maxOkTarget() == null ? null : FrontierLine.last(single, f.maxOkTarget(), true),
                f.predictedMax()));
        boolean stated = single.stream().anyMatch(SurfaceTable::statedPool);
        for (Frontier.Surface s : f.surface()) {
            List<Scenario> steps = FrontierLine.at(a.steps(), s.concurrency());
            levels.add(new Level(
                    s.concurrency(),
                    s.maxOkTarget(),
                    s.minFailedTarget(),
                    cause(s),
                    s.launches(),
                    s.maxOkTarget() == null ? null : FrontierLine.last(steps, s.maxOkTarget(), true),
                    stated ? s.predictedTarget() : null));
        }
        return levels;
    }

    /**
     * True when the step's server stated its KV pool or slots: the level's {@code predicted_target} is then the
     * engine's arithmetic, not the single-prompt frontier over N (docs/results.md, {@code predicted_target}).
     */
    private static boolean statedPool(Scenario s) {
        ServedCapacity c = s.server() == null ? null : s.server().capacity();
        return c != null && (c.kvTokens() != null || c.slots() != null);
    }

    private static String cause(Frontier.Surface s) {
        String cause = TerminalText.line(s.cause());
        if (s.detail() != null && "not_concurrent".equals(s.cause())) {
            cause += " ("
                    + TerminalText.line(
                            s.detail().replaceFirst("^all \\d+ requests were served, but not held at once: ", ""))
                    + ")";
        }
        return cause;
    }

    static List<String> headers(Labels labels) {
        List<String> h = new ArrayList<>();
        if (labels.comparing()) {
            h.add("hardware");
        }
        h.addAll(List.of(
                "backend",
                "N",
                "largest held at once",
                "smallest not",
                "launches",
                "TTFT at largest (mean)",
                "TTFT spread (min - max)",
                "cause"));
        return h;
    }

    static List<Boolean> numeric(Labels labels) {
        List<Boolean> n = new ArrayList<>();
        if (labels.comparing()) {
            n.add(false);
        }
        n.addAll(List.of(false, true, true, true, true, true, true, false));
        return n;
    }

    /** One row per level of every answer that has a map. */
    static List<List<String>> rows(List<Answer> answers, Labels labels) {
        List<List<String>> rows = new ArrayList<>();
        for (Answer a : answers) {
            for (Level l : levels(a)) {
                List<String> r = new ArrayList<>();
                if (labels.comparing()) {
                    r.add(TerminalText.line(labels.of(a.input())));
                }
                r.addAll(List.of(
                        TerminalText.line(a.backend()),
                        Integer.toString(l.n()),
                        l.maxOk() == null ? "none" : Cells.tokens(l.maxOk()),
                        Cells.tokens(l.minFailed()),
                        Integer.toString(l.launches()),
                        ttftMean(l.held()),
                        ttftSpread(l.held()),
                        l.cause()));
                rows.add(r);
            }
        }
        return rows;
    }

    private static String ttftMean(Scenario held) {
        if (held == null || held.metrics() == null || held.metrics().ttftMs() == null) {
            return "";
        }
        double mean = held.metrics().ttftMs().mean();
        return Double.isFinite(mean) ? Cells.duration(mean) : "";
    }

    /** The quickest and slowest first token of the step's requests; empty for one request. */
    private static String ttftSpread(Scenario held) {
        if (held == null || held.metrics() == null || held.metrics().ttftMs() == null) {
            return "";
        }
        var t = held.metrics().ttftMs();
        if (t.min() == null || t.max() == null || t.count() == null || t.count() < 2) {
            return "";
        }
        return Cells.duration(t.min()) + " - " + Cells.duration(t.max());
    }
}
