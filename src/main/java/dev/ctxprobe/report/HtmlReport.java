package dev.ctxprobe.report;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One self-contained HTML page: the frontier table, inline SVG charts and the step tables with each
 * failure's evidence. No script, no external resource; a Content-Security-Policy forbids both, as a second
 * line of defence behind escaping every string taken from results files.
 */
final class HtmlReport implements ReportRenderer {

    private static final String STYLE = """
            :root { color-scheme: light; }
            body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
                   color: #1d2329; margin: 24px auto; max-width: 1240px; padding: 0 16px; }
            h1 { font-size: 24px; margin: 0 0 4px; }
            h2 { font-size: 19px; margin: 28px 0 10px; border-bottom: 1px solid #d8dee4; padding-bottom: 4px; }
            h3 { font-size: 16px; margin: 22px 0 6px; }
            .sub { color: #57606a; margin: 0; }
            table { border-collapse: collapse; margin: 6px 0 12px; }
            th, td { border: 1px solid #d8dee4; padding: 4px 8px; text-align: left; vertical-align: top; }
            th { background: #f3f5f7; font-weight: 600; white-space: nowrap; }
            td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
            tr:nth-child(even) td { background: #fafbfc; }
            .scroll { overflow-x: auto; }
            .badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; font-weight: 600;
                     white-space: nowrap; }
            .ok { background: #dafbe1; color: #116329; }
            .fail { background: #ffebe9; color: #a40e26; }
            .skip { background: #eaeef2; color: #57606a; }
            .answer { font-weight: 600; }
            dl.meta { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; margin: 4px 0 10px; }
            dl.meta dt { color: #57606a; }
            dl.meta dd { margin: 0; overflow-wrap: anywhere; }
            details { margin-top: 4px; }
            summary { cursor: pointer; color: #0969da; }
            pre { background: #f6f8fa; border: 1px solid #d8dee4; padding: 6px 8px; margin: 4px 0;
                  white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; max-width: 720px; }
            figure { margin: 8px 0 20px; }
            figure svg { width: 100%; height: auto; max-width: 960px; display: block; }
            .cause { max-width: 480px; overflow-wrap: anywhere; }
            footer { color: #57606a; font-size: 12px; margin-top: 32px; }
            """;

    @Override
    public String render(List<ResultSet> sets) {
        Labels labels = Labels.of(sets);
        StringBuilder out = new StringBuilder(64 * 1024);
        String experiments = sets.stream()
                .map(s -> s.run().experiment())
                .filter(e -> !e.isEmpty())
                .distinct()
                .collect(Collectors.joining(", "));
        out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ")
                .append("style-src 'unsafe-inline'\">\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
                .append("<title>ctxprobe report")
                .append(experiments.isEmpty() ? "" : ": " + Html.escape(experiments))
                .append("</title>\n<style>\n")
                .append(STYLE)
                .append("</style>\n</head>\n<body>\n<header>\n<h1>ctxprobe report</h1>\n<p class=\"sub\">")
                .append(Html.escape(experiments.isEmpty() ? "results" : experiments))
                .append(" &middot; ")
                .append(sets.size())
                .append(sets.size() == 1 ? " results file" : " results files")
                .append("</p>\n</header>\n");
        frontier(out, sets, labels);
        charts(out, sets, labels);
        out.append("<section>\n<h2>Steps</h2>\n");
        for (ResultSet set : sets) {
            steps(out, set, labels);
        }
        out.append("</section>\n<footer>Written by ctxprobe. This page is self-contained: ")
                .append("no scripts, no fonts or styles from the network.</footer>\n</body>\n</html>\n");
        return out.toString();
    }

    private static void frontier(StringBuilder out, List<ResultSet> sets, Labels labels) {
        out.append("<section>\n<h2>Frontier</h2>\n");
        List<FrontierView> views = FrontierView.of(sets, labels);
        if (views.isEmpty()) {
            out.append("<p>No steps yet.</p>\n</section>\n");
            return;
        }
        out.append("<div class=\"scroll\"><table class=\"frontier\">\n<thead><tr>")
                .append("<th>backend</th><th>largest passing</th><th>smallest failing</th><th>cause</th>")
                .append("<th>launches</th><th>TTFT at max</th><th>notes</th></tr></thead>\n<tbody>\n");
        for (FrontierView v : views) {
            FrontierSummary f = v.frontier();
            StringBuilder notes = new StringBuilder();
            if (f.bracketRatio() != null) {
                notes.append("bracket ").append(Cells.percent(f.bracketRatio()));
            }
            if (f.predictedMax() != null) {
                notes.append(notes.isEmpty() ? "" : "; ")
                        .append("predicted max ")
                        .append(Cells.tokens(f.predictedMax()));
            }
            if (!f.nonMonotonic().isEmpty()) {
                notes.append(notes.isEmpty() ? "" : "; ")
                        .append("non-monotonic: fails at ")
                        .append(v.nonMonotonicText());
            }
            if (f.mode() != null && !f.mode().isEmpty()) {
                notes.append(notes.isEmpty() ? "" : "; ").append("mode ").append(f.mode());
            }
            if (f.derived()) {
                notes.append(notes.isEmpty() ? "" : "; ").append("derived from the steps");
            }
            out.append("<tr><td>")
                    .append(Html.escape(v.label()))
                    .append("</td><td class=\"num answer\">")
                    .append(f.maxOkTarget() == null ? "none" : Cells.tokens(f.maxOkTarget()))
                    .append("</td><td class=\"num\">")
                    .append(Cells.tokens(f.minFailedTarget()))
                    .append("</td><td class=\"cause\">")
                    .append(Html.escape(v.failureCause()))
                    .append("</td><td class=\"num\">")
                    .append(f.launches())
                    .append("</td><td class=\"num\">")
                    .append(Html.escape(v.ttftText().replaceFirst("^TTFT ", "")))
                    .append("</td><td>")
                    .append(Html.escape(notes.toString()))
                    .append("</td></tr>\n");
        }
        out.append("</tbody></table></div>\n</section>\n");
    }

    private static void charts(StringBuilder out, List<ResultSet> sets, Labels labels) {
        List<Charts.Chart> charts = Charts.of(sets, labels);
        if (charts.isEmpty()) {
            return;
        }
        out.append("<section>\n<h2>Charts</h2>\n");
        for (Charts.Chart chart : charts) {
            out.append("<figure>\n").append(Charts.svg(chart)).append("\n</figure>\n");
        }
        out.append("</section>\n");
    }

    private static void steps(StringBuilder out, ResultSet set, Labels labels) {
        RunInfo run = set.run();
        out.append("<h3>")
                .append(Html.escape(labels.of(set)))
                .append(run.experiment().isEmpty() ? "" : ": " + Html.escape(run.experiment()))
                .append("</h3>\n<dl class=\"meta\">\n");
        meta(out, "file", set.source());
        meta(out, "run", run.runId());
        meta(out, "started", run.timestamp());
        meta(out, "model", run.model());
        meta(out, "hardware", run.hardware());
        meta(out, "accelerator", run.accelerator());
        meta(out, "engine", run.engine());
        meta(out, "description", run.description());
        if (run.inProgress()) {
            meta(out, "status", "in progress: " + set.scenarios().size() + " steps so far");
        } else if (!run.finishedAt().isEmpty()) {
            meta(out, "finished", run.finishedAt());
        }
        out.append("</dl>\n");
        if (set.scenarios().isEmpty()) {
            out.append("<p>No steps yet.</p>\n");
            return;
        }
        out.append("<div class=\"scroll\"><table class=\"steps\">\n<thead><tr>")
                .append("<th>backend</th><th>target</th><th>max_model_len</th><th>outcome</th>")
                .append("<th>TTFT ms</th><th>e2e ms</th><th>input tok/s</th><th>startup s</th>")
                .append("<th>error / cause</th></tr></thead>\n<tbody>\n");
        for (ScenarioRow row : set.scenarios()) {
            StepMetrics m = row.metrics();
            String badge = row.success() ? "ok" : row.launched() ? "fail" : "skip";
            out.append("<tr><td>")
                    .append(Html.escape(row.backend()))
                    .append("</td><td class=\"num\">")
                    .append(Cells.tokens(row.targetLen()))
                    .append("</td><td class=\"num\">")
                    .append(Cells.tokens(row.maxModelLen()))
                    .append("</td><td><span class=\"badge ")
                    .append(badge)
                    .append("\">")
                    .append(Html.escape(row.outcome()))
                    .append("</span></td><td class=\"num\">")
                    .append(
                            m == null || m.ttftMs() == null
                                    ? ""
                                    : Cells.oneDecimal(m.ttftMs().mean()))
                    .append("</td><td class=\"num\">")
                    .append(
                            m == null || m.e2eMs() == null
                                    ? ""
                                    : Cells.oneDecimal(m.e2eMs().mean()))
                    .append("</td><td class=\"num\">")
                    .append(m == null ? "" : Cells.whole(m.inputTokenThroughput()))
                    .append("</td><td class=\"num\">")
                    .append(
                            row.server() == null
                                    ? ""
                                    : Cells.oneDecimal(row.server().startupS()))
                    .append("</td><td class=\"cause\">")
                    .append(Html.escape(StepCells.causeText(row)));
            details(out, row);
            out.append("</td></tr>\n");
        }
        out.append("</tbody></table></div>\n");
    }

    /** The step's evidence, failure facts, server facts and command, folded away under the cause. */
    private static void details(StringBuilder out, ScenarioRow row) {
        StepFailure f = row.failure();
        ServerInfo s = row.server();
        Verification v = row.verification();
        boolean hasAny = f != null || s != null || v != null || row.serverArgs() != null || row.log() != null;
        if (!hasAny) {
            return;
        }
        out.append("<details><summary>")
                .append(f != null && !f.evidence().isEmpty() ? "evidence and details" : "details")
                .append("</summary>\n<dl class=\"meta\">\n");
        if (f != null) {
            meta(out, "phase", f.phase());
            meta(out, "class", f.failureClass());
            meta(out, "detail", f.detail());
            meta(out, "exit code", f.exitCode() == null ? null : f.exitCode().toString());
            meta(out, "log", f.log());
        }
        if (f == null || f.log() == null) {
            meta(out, "log", row.log());
        }
        if (s != null) {
            meta(out, "ready via", s.readyVia());
            meta(out, "pid", s.pid() == null ? null : s.pid().toString());
            meta(
                    out,
                    "server exit code",
                    s.exitCode() == null ? null : s.exitCode().toString());
            meta(
                    out,
                    "stopped cleanly",
                    s.stoppedCleanly() == null ? null : s.stoppedCleanly().toString());
            if (!s.leftoverPids().isEmpty()) {
                meta(
                        out,
                        "leftover pids",
                        s.leftoverPids().stream().map(String::valueOf).collect(Collectors.joining(", ")));
            }
            meta(out, "KV capacity", s.kvCapacityTokens() == null ? null : Cells.tokens(s.kvCapacityTokens()));
            meta(out, "max context hint", s.maxContextHint() == null ? null : Cells.tokens(s.maxContextHint()));
        }
        if (v != null) {
            meta(
                    out,
                    "prompt tokens",
                    v.promptTokens() == null
                            ? null
                            : Cells.tokens(v.promptTokens()) + (Boolean.TRUE.equals(v.exact()) ? " (exact)" : ""));
        }
        out.append("</dl>\n");
        if (f != null && !f.evidence().isEmpty()) {
            out.append("<pre class=\"evidence\">");
            f.evidence().forEach(line -> out.append(Html.escape(line)).append('\n'));
            out.append("</pre>\n");
        }
        if (row.serverArgs() != null) {
            out.append("<pre class=\"command\">")
                    .append(Html.escape(row.serverArgs()))
                    .append("</pre>\n");
        }
        out.append("</details>");
    }

    private static void meta(StringBuilder out, String name, String value) {
        if (value != null && !value.isEmpty()) {
            out.append("<dt>")
                    .append(Html.escape(name))
                    .append("</dt><dd>")
                    .append(Html.escape(value))
                    .append("</dd>\n");
        }
    }
}
