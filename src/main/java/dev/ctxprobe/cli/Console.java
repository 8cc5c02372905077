package dev.ctxprobe.cli;

import dev.ctxprobe.explore.RunListener;
import dev.ctxprobe.report.FrontierLine;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The run's terminal output: one line per step as it finishes, then a closing table led by the frontier line of
 * each backend. It prints only; the results are saved whether or not anyone listens.
 */
final class Console implements RunListener {
    private final PrintStream out;
    private final boolean quiet;
    private final boolean verbose;
    private final boolean live;
    private final boolean together;
    /** With backends explored at once: the line of each live step, by backend, drawn below the finished ones. */
    private final Map<String, String> running = new LinkedHashMap<>();

    private int steps;

    /**
     * @param stepsSoFar the steps already in the document (a resumed run counts on from them)
     * @param together backends are explored at once, so several steps are live at a time
     */
    Console(PrintStream out, boolean quiet, boolean verbose, int stepsSoFar, boolean together) {
        this.out = out;
        this.quiet = quiet;
        this.verbose = verbose;
        this.steps = stepsSoFar;
        this.together = together;
        // On a terminal the step's line starts at launch and is finished in place; CI logs get whole lines.
        this.live = System.console() != null && System.getenv("CI") == null;
    }

    @Override
    public void runStarted(String experiment, Path runDir) {
        if (!quiet) {
            out.println("ctxprobe " + dev.ctxprobe.run.Version.of() + ": " + experiment + " -> " + runDir);
        }
    }

    @Override
    public synchronized void stepStarting(String backend, long target, long maxModelLen) {
        if (quiet) {
            return;
        }
        if (verbose) {
            out.printf(
                    Locale.ROOT,
                    "[%d] %s %,d tokens: starting (max_model_len %,d)%n",
                    steps + 1,
                    backend,
                    target,
                    maxModelLen);
        } else if (live && together) {
            eraseRunning();
            running.put(backend, String.format(Locale.ROOT, "    %-10s %,11d  ...", backend, target));
            drawRunning();
        } else if (live) {
            out.printf(Locale.ROOT, "[%d] %-10s %,11d  ...", steps + 1, backend, target);
            out.flush();
        }
    }

    @Override
    public synchronized void stepFinished(Scenario s, ResultDocument doc) {
        // Numbered by the document, so a resumed run and skipped steps count on from where they stand.
        steps = doc.scenarios().size();
        if (quiet) {
            return;
        }
        if (live && !verbose && together) {
            eraseRunning();
            running.remove(s.backend());
        } else if (live && !verbose) {
            out.print("\r");
        }
        out.println(stepLine(steps, s));
        if (s.server() != null && !s.server().leftoverPids().isEmpty()) {
            out.println("      warning: processes " + s.server().leftoverPids() + " of this server survived KILL;"
                    + " they may hold the port or accelerator memory");
        }
        if (verbose && s.failure() != null) {
            s.failure().evidence().forEach(l -> out.println("      | " + l));
        }
        if (live && !verbose && together) {
            drawRunning();
        }
    }

    // The live steps' lines sit below the finished ones; each change redraws them in place (ANSI: up, clear).
    private void eraseRunning() {
        if (!running.isEmpty()) {
            out.print("\033[" + running.size() + "F\033[J");
        }
    }

    private void drawRunning() {
        running.values().forEach(out::println);
        out.flush();
    }

    @Override
    public void backendFinished(String backend, Frontier frontier, ResultDocument doc) {}

    static String stepLine(int n, Scenario s) {
        String head = String.format(Locale.ROOT, "[%d] %-10s %,11d  ", n, s.backend(), s.targetLen());
        if (s.success() && s.metrics() != null) {
            return head
                    + String.format(
                            Locale.ROOT,
                            "ok    TTFT %s  %,.0f tok/s%s",
                            duration(s.metrics().ttftMs().mean()),
                            s.metrics().inputTokenThroughput(),
                            s.server() != null && s.server().startupS() != null
                                    ? String.format(
                                            Locale.ROOT,
                                            "  (startup %.1f s)",
                                            s.server().startupS())
                                    : "");
        }
        String error = s.error() == null ? "" : s.error();
        String outcome = s.outcome().id();
        return head + "FAIL  " + (error.startsWith(outcome) ? error : outcome + ": " + error);
    }

    /** The closing summary: frontier lines first, then a table of every step. */
    void summary(ResultDocument doc, Path runDir) {
        if (quiet) {
            frontierLines(doc);
            return;
        }
        out.println();
        frontierLines(doc);
        out.println();
        out.printf(
                Locale.ROOT,
                "%-10s %11s %13s  %-18s %10s %14s%n",
                "backend",
                "target",
                "max_model_len",
                "outcome",
                "TTFT",
                "input tok/s");
        for (Scenario s : doc.scenarios()) {
            boolean ok = s.success() && s.metrics() != null;
            out.printf(
                    Locale.ROOT,
                    "%-10s %,11d %,13d  %-18s %10s %14s%n",
                    s.backend(),
                    s.targetLen(),
                    s.maxModelLen(),
                    s.outcome().id(),
                    ok ? duration(s.metrics().ttftMs().mean()) : "-",
                    ok ? String.format(Locale.ROOT, "%,.0f", s.metrics().inputTokenThroughput()) : "-");
        }
        out.println();
        out.println("results: " + runDir.resolve("results.json"));
    }

    private void frontierLines(ResultDocument doc) {
        int width =
                doc.frontier().keySet().stream().mapToInt(String::length).max().orElse(6);
        doc.frontier()
                .forEach((backend, f) -> out.println(FrontierLine.line(backend, width, f, doc.scenariosOf(backend))));
    }

    static String duration(double ms) {
        return ms >= 1_000
                ? String.format(Locale.ROOT, "%.2f s", ms / 1000)
                : String.format(Locale.ROOT, "%.1f ms", ms);
    }
}
