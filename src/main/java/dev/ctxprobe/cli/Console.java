package dev.ctxprobe.cli;

import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.explore.Frontier;
import dev.ctxprobe.explore.FrontierLine;
import dev.ctxprobe.explore.RunListener;
import dev.ctxprobe.results.FrontierEntry;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.ResultFiles;
import dev.ctxprobe.results.Scenario;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The run's terminal output and its results file: one line per step as it finishes, the file rewritten after
 * every step, and a closing table led by the frontier line of each backend.
 */
final class Console implements RunListener {
    private final PrintStream out;
    private final Path resultsFile;
    private final boolean quiet;
    private final boolean verbose;
    private final boolean live;
    private int step;

    Console(PrintStream out, Path resultsFile, boolean quiet, boolean verbose) {
        this.out = out;
        this.resultsFile = resultsFile;
        this.quiet = quiet;
        this.verbose = verbose;
        // On a terminal the step's line starts at launch and is finished in place; CI logs get whole lines.
        this.live = System.console() != null && System.getenv("CI") == null;
    }

    @Override
    public void stepStarting(String backend, long target, long maxModelLen) {
        if (quiet) {
            return;
        }
        if (verbose) {
            out.printf(
                    Locale.ROOT,
                    "[%d] %s %,d tokens: starting (max_model_len %,d)%n",
                    step,
                    backend,
                    target,
                    maxModelLen);
        } else if (live) {
            out.printf(Locale.ROOT, "[%d] %-10s %,11d  ...", step + 1, backend, target);
            out.flush();
        }
    }

    @Override
    public void stepFinished(Scenario s, ResultDocument doc) {
        save(doc);
        // Numbered by the document, so a resumed run and skipped steps count on from where they stand.
        step = doc.scenarios().size();
        if (quiet) {
            return;
        }
        if (live && !verbose) {
            out.print("\r");
        }
        out.println(stepLine(step, s));
        if (s.server() != null
                && s.server().leftoverPids() != null
                && !s.server().leftoverPids().isEmpty()) {
            out.println("      warning: processes " + s.server().leftoverPids() + " of this server survived KILL;"
                    + " they may hold the port or accelerator memory");
        }
        if (verbose && s.failure() != null) {
            s.failure().evidence().forEach(l -> out.println("      | " + l));
        }
    }

    @Override
    public void backendFinished(String backend, FrontierEntry frontier, ResultDocument doc) {
        save(doc);
    }

    void save(ResultDocument doc) {
        try {
            ResultFiles.write(resultsFile, doc);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + resultsFile + ": " + e.getMessage(), e);
        }
    }

    static String stepLine(int n, Scenario s) {
        String head = String.format(Locale.ROOT, "[%d] %-10s %,11d  ", n, s.backend(), s.targetLen());
        if (s.success() && s.metrics() != null) {
            return head
                    + String.format(
                            Locale.ROOT,
                            "ok    TTFT %s  %,.0f tok/s%s",
                            duration(s.metrics().ttftMs().p50()),
                            s.metrics().inputTokenThroughput(),
                            s.server() != null && s.server().startupS() != null
                                    ? String.format(
                                            Locale.ROOT,
                                            "  (startup %.1f s)",
                                            s.server().startupS())
                                    : "");
        }
        String error = s.error() == null ? "" : s.error();
        return head + "FAIL  " + (error.startsWith(s.outcome()) ? error : s.outcome() + ": " + error);
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
                    s.outcome(),
                    ok ? duration(s.metrics().ttftMs().p50()) : "-",
                    ok ? String.format(Locale.ROOT, "%,.0f", s.metrics().inputTokenThroughput()) : "-");
        }
        out.println();
        out.println("results: " + runDir.resolve(ResultFiles.NAME));
    }

    private void frontierLines(ResultDocument doc) {
        int width =
                doc.frontier().keySet().stream().mapToInt(String::length).max().orElse(6);
        doc.frontier().forEach((backend, f) -> out.println(frontierLine(backend, width, f, doc.scenariosOf(backend))));
    }

    static String frontierLine(String backend, int width, FrontierEntry f, List<Scenario> steps) {
        FailureClass next = null;
        Double ttft = null;
        for (Scenario s : steps) {
            if (f.minFailedTarget() != null
                    && s.targetLen() == f.minFailedTarget()
                    && !s.success()
                    && !"skipped".equals(s.outcome())) {
                next = FailureClass.fromId(s.outcome());
            }
            if (f.maxOkTarget() != null && s.targetLen() == f.maxOkTarget() && s.success() && s.metrics() != null) {
                ttft = s.metrics().ttftMs().p50() / 1000.0;
            }
        }
        Frontier frontier = new Frontier(
                f.maxOkTarget(),
                f.minFailedTarget(),
                f.bracketRatio(),
                f.launches(),
                f.predictedMax(),
                f.nonMonotonic(),
                f.stoppedBecause());
        return FrontierLine.line(backend, width, frontier, next, ttft);
    }

    static String duration(double ms) {
        return ms >= 1_000
                ? String.format(Locale.ROOT, "%.2f s", ms / 1000)
                : String.format(Locale.ROOT, "%.1f ms", ms);
    }
}
