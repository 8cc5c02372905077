package dev.ctxprobe.report;

import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Metadata;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.roofline.StepRoofline;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One self-contained HTML page: the frontier table, inline SVG charts and the step tables with each
 * failure's evidence. No script, no external resource; a Content-Security-Policy forbids both, as a second
 * line of defence behind escaping every string taken from results files.
 */
final class HtmlReport implements ReportRenderer {
    /** The columns of the step table, which a step's details row spans. */
    private static final int STEP_COLUMNS = 11;

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
            th { background: #f3f5f7; font-weight: 600; }
            td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
            table.frontier tr:nth-child(even) td, table.steps > tbody:nth-of-type(even) > tr > td { background: #fafbfc; }
            tr.more td { border-top: hidden; padding-top: 0; font-size: 13px; }
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
            .cause { min-width: 14em; max-width: 40em; overflow-wrap: anywhere; word-break: normal; hyphens: none; }
            td.label { min-width: 7em; overflow-wrap: anywhere; }
            td.notes { min-width: 12em; }
            .unit { font-weight: 400; color: #57606a; font-size: 12px; }
            pre.lines { max-width: none; font-size: 13px; white-space: pre-wrap; overflow-wrap: anywhere; }
            table.requests { font-size: 12px; margin: 6px 0; }
            table.heat td { min-width: 9em; text-align: center; vertical-align: middle; }
            table.heat td .f { font-size: 16px; font-weight: 600; font-variant-numeric: tabular-nums; }
            table.heat td .d { font-size: 12px; color: #3a434c; }
            table.heat td.none { background: #f6f8fa; color: #57606a; }
            footer { color: #57606a; font-size: 12px; margin-top: 32px; }
            """;

    @Override
    public String render(List<ReportInput> inputs) {
        Labels labels = Labels.of(inputs);
        StringBuilder out = new StringBuilder(64 * 1024);
        String experiments = inputs.stream()
                .map(s -> Cells.text(s.metadata().experiment()))
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
                .append(inputs.size())
                .append(inputs.size() == 1 ? " results file" : " results files")
                .append("</p>\n</header>\n");
        // A matrix's grid is its answer at a glance: it leads, the frontier of each cell follows.
        matrix(out, inputs, labels);
        frontier(out, inputs, labels);
        charts(out, inputs, labels);
        out.append("<section>\n<h2>Steps</h2>\n");
        for (ReportInput input : inputs) {
            steps(out, input, labels);
        }
        out.append("</section>\n<footer>Written by ctxprobe. This page is self-contained: ")
                .append("no scripts, no fonts or styles from the network.</footer>\n</body>\n</html>\n");
        return out.toString();
    }

    /**
     * Each matrix as a heat map (docs/results.md#matrix): a cell's shade grows with its frontier against the
     * largest of its grid, so the best combination of flags stands out before any number is read.
     */
    private static void matrix(StringBuilder out, List<ReportInput> inputs, Labels labels) {
        List<MatrixTables.Grid> grids = MatrixTables.of(Answer.of(inputs, labels), labels);
        if (grids.isEmpty()) {
            return;
        }
        out.append("<section>\n<h2>Matrix</h2>\n<p class=\"sub\">Each cell: its frontier, what fails above it,")
                .append(" the TTFT at the frontier and how far the prediction was off; darker is longer.</p>\n");
        for (MatrixTables.Grid g : grids) {
            Long largest = g.largest();
            out.append("<h3>").append(Html.escape(g.title())).append("</h3>\n");
            out.append("<div class=\"scroll\"><table class=\"heat\">\n<thead><tr>");
            for (String h : g.header()) {
                out.append("<th>").append(Html.escape(h)).append("</th>");
            }
            out.append("</tr></thead>\n<tbody>\n");
            for (MatrixTables.Row r : g.rows()) {
                out.append("<tr><th>").append(Html.escape(r.value())).append("</th>");
                for (Answer a : r.cells()) {
                    List<String> parts = MatrixTables.parts(a);
                    Long f = a == null ? null : a.frontier().maxOkTarget();
                    if (f == null || largest == null) {
                        out.append("<td class=\"none\">");
                    } else {
                        // Lightness from 92% (short) to 52% (the grid's longest): legible text on every shade.
                        long lightness = Math.round(92 - 40.0 * f / largest);
                        out.append("<td style=\"background: hsl(140, 50%, ")
                                .append(lightness)
                                .append("%)\" title=\"")
                                .append(Html.escape(a.backend()))
                                .append("\">");
                    }
                    if (!parts.isEmpty()) {
                        out.append("<div class=\"f\">")
                                .append(Html.escape(parts.getFirst()))
                                .append("</div>");
                        parts.subList(1, parts.size())
                                .forEach(p -> out.append("<div class=\"d\">")
                                        .append(Html.escape(p))
                                        .append("</div>"));
                    }
                    out.append("</td>");
                }
                out.append("</tr>\n");
            }
            out.append("</tbody></table></div>\n<p class=\"sub\">")
                    .append(Html.escape(MatrixTables.launches(g)))
                    .append("</p>\n");
        }
        out.append("</section>\n");
    }

    private static void frontier(StringBuilder out, List<ReportInput> inputs, Labels labels) {
        out.append("<section>\n<h2>Frontier</h2>\n");
        List<Answer> answers = Answer.of(inputs, labels);
        if (answers.isEmpty()) {
            out.append("<p>No steps yet.</p>\n</section>\n");
            return;
        }
        out.append("<pre class=\"lines\">");
        Answer.lines(answers).forEach(line -> out.append(Html.escape(line)).append('\n'));
        out.append("</pre>\n");
        out.append("<div class=\"scroll\"><table class=\"frontier\">\n<thead><tr>")
                .append("<th>backend</th><th>largest passing</th><th>smallest failing</th><th>cause</th>")
                .append("<th>launches</th><th>TTFT at max</th>")
                .append("<th>prefill tok/s at max<br><span class=\"unit\">target / TTFT</span></th>")
                .append("<th>notes</th></tr></thead>\n<tbody>\n");
        for (Answer a : answers) {
            Frontier f = a.frontier();
            List<String> notes = new ArrayList<>();
            if (f.bracketRatio() != null) {
                notes.add("bracket " + Cells.percent(f.bracketRatio()));
            }
            if (f.predictedMax() != null) {
                notes.add(
                        "the server stated max " + Cells.tokens(f.predictedMax()) + " (its own limit, not the plan's)");
            }
            if (Predicted.has(f)) {
                notes.add(Predicted.note(f) + " (ctxprobe plan, before the first launch)");
            }
            if (!f.nonMonotonic().isEmpty()) {
                notes.add("non-monotonic: fails at " + a.nonMonotonicText());
            }
            if (!a.search().isEmpty()) {
                notes.add(a.search());
            }
            if (!a.stoppedBecause().isEmpty()) {
                notes.add("stopped because " + a.stoppedBecause());
            }
            Double ttft = a.ttftAtMaxMs();
            out.append("<tr>");
            td(out, "label", Html.escape(a.label()));
            td(out, "num answer", f.maxOkTarget() == null ? "none" : Cells.tokens(f.maxOkTarget()));
            td(out, "num", Cells.tokens(f.minFailedTarget()));
            td(out, "cause", cause(a.cause()));
            td(out, "num", Integer.toString(f.launches()));
            td(out, "num", ttft == null ? "" : Cells.duration(ttft));
            td(out, "num", Cells.whole(a.prefillAtMax()));
            td(out, "notes", Html.escape(String.join("; ", notes)));
            out.append("</tr>\n");
        }
        out.append("</tbody></table></div>\n");
        surface(out, answers, labels);
        out.append("</section>\n");
    }

    /** The capacity map's table (docs/search.md#the-capacity-map), only where some answer has one. */
    private static void surface(StringBuilder out, List<Answer> answers, Labels labels) {
        if (!SurfaceTable.any(answers)) {
            return;
        }
        out.append("<h3>Capacity map: the longest prompt held at once by N requests</h3>\n")
                .append("<div class=\"scroll\"><table class=\"frontier surface\">\n<thead><tr>");
        SurfaceTable.headers(labels)
                .forEach(h -> out.append("<th>").append(Html.escape(h)).append("</th>"));
        out.append("</tr></thead>\n<tbody>\n");
        List<Boolean> numeric = SurfaceTable.numeric(labels);
        for (List<String> row : SurfaceTable.rows(answers, labels)) {
            out.append("<tr>");
            for (int i = 0; i < row.size(); i++) {
                boolean last = i == row.size() - 1;
                td(
                        out,
                        last ? "cause" : numeric.get(i) ? "num" : "label",
                        last ? cause(row.get(i)) : Html.escape(row.get(i)));
            }
            out.append("</tr>\n");
        }
        out.append("</tbody></table></div>\n");
    }

    private static void charts(StringBuilder out, List<ReportInput> inputs, Labels labels) {
        List<Charts.Chart> charts = Charts.of(inputs, labels);
        if (charts.isEmpty()) {
            return;
        }
        out.append("<section>\n<h2>Charts</h2>\n");
        for (Charts.Chart chart : charts) {
            out.append("<figure>\n").append(Charts.svg(chart)).append("\n</figure>\n");
        }
        out.append("</section>\n");
    }

    private static void steps(StringBuilder out, ReportInput input, Labels labels) {
        Metadata run = input.metadata();
        String experiment = Cells.text(run.experiment());
        out.append("<h3>")
                .append(Html.escape(labels.of(input)))
                .append(experiment.isEmpty() ? "" : ": " + Html.escape(experiment))
                .append("</h3>\n<dl class=\"meta\">\n");
        meta(out, "file", input.source());
        meta(out, "run", run.runId());
        meta(out, "started", run.timestamp());
        meta(out, "model", run.model());
        meta(out, "hardware", run.hardware());
        meta(out, "accelerator", run.accelerator());
        meta(out, "engine", run.engine());
        meta(out, "host", run.host());
        meta(out, "description", run.description());
        if (input.inProgress()) {
            meta(out, "status", "in progress: " + input.document().scenarios().size() + " steps so far");
        } else {
            meta(out, "finished", run.finishedAt());
        }
        out.append("</dl>\n");
        if (input.document().scenarios().isEmpty()) {
            out.append("<p>No steps yet.</p>\n");
            return;
        }
        // The pass-key answer's column only where some step was checked (docs/results.md#answer).
        boolean answers = StepFacts.anyAnswer(input.document().scenarios());
        out.append("<div class=\"scroll\"><table class=\"steps\">\n<thead><tr>")
                .append(
                        "<th>backend</th><th>target</th><th>context<br><span class=\"unit\">the server's</span></th><th>outcome</th>")
                .append("<th>TTFT ms</th><th>e2e ms</th>")
                .append("<th>prefill tok/s<br><span class=\"unit\">target / TTFT</span></th>")
                .append("<th>input tok/s<br><span class=\"unit\">input tokens / duration</span></th>")
                .append("<th>% of roofline<br><span class=\"unit\">floor / TTFT</span></th>")
                .append("<th>startup s</th>")
                .append(answers ? "<th>answer</th>" : "")
                .append("<th>error / cause</th></tr></thead>\n");
        for (Scenario row : input.document().scenarios()) {
            StepMetrics m = row.metrics();
            String badge = row.success() ? "ok" : row.outcome().launched() ? "fail" : "skip";
            // One body per step: the step's row and, below it across the whole table, its details.
            out.append("<tbody><tr>");
            td(out, null, Html.escape(row.backend()));
            td(out, "num", Cells.tokens(row.targetLen()));
            td(out, "num", Cells.tokens(StepFacts.context(row)));
            td(
                    out,
                    null,
                    "<span class=\"badge " + badge + "\">"
                            + Html.escape(row.outcome().id()) + "</span>");
            td(out, "num", m == null ? "" : Cells.oneDecimal(m.ttftMs().mean()));
            td(out, "num", m == null ? "" : Cells.oneDecimal(m.e2eMs().mean()));
            td(out, "num", Cells.whole(StepFacts.prefillRate(row)));
            td(out, "num", m == null ? "" : Cells.whole(m.inputTokenThroughput()));
            td(out, "num", Html.escape(Cells.text(StepRoofline.cell(row))));
            td(
                    out,
                    "num",
                    row.server() == null ? "" : Cells.oneDecimal(row.server().startupS()));
            if (answers) {
                td(out, null, Html.escape(StepFacts.answer(row)));
            }
            td(out, "cause", cause(StepFacts.causeText(row)));
            out.append("</tr>\n");
            details(out, row, answers ? STEP_COLUMNS + 1 : STEP_COLUMNS);
            out.append("</tbody>\n");
        }
        out.append("</table></div>\n");
        List<String> roofline = Rooflines.lines(input.document());
        if (!roofline.isEmpty()) {
            out.append("<p>").append(Html.escape(Rooflines.TITLE)).append("</p>\n<ul>\n");
            roofline.forEach(l -> out.append("<li>").append(Html.escape(l)).append("</li>\n"));
            out.append("</ul>\n");
        }
    }

    /**
     * The step's evidence, failure facts, server facts, requests and command, folded away in a row across the whole
     * table below the step: in the cause's cell they would widen the table when opened.
     */
    private static void details(StringBuilder out, Scenario row, int columns) {
        Scenario.Failure f = row.failure();
        Scenario.Server s = row.server();
        Scenario.Verification v = row.verification();
        boolean hasAny = f != null
                || s != null
                || v != null
                || !row.requests().isEmpty()
                || (row.serverArgs() != null && !row.serverArgs().isEmpty())
                || row.log() != null;
        if (!hasAny) {
            return;
        }
        out.append("<tr class=\"more\"><td colspan=\"")
                .append(columns)
                .append("\"><details><summary>")
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
            meta(out, "server", s.id());
            meta(out, "ready via", s.readyVia());
            meta(out, "pid", s.pid() == null ? null : s.pid().toString());
            if (s.ended() != null) {
                meta(out, "ended", StepFacts.ended(row));
            } else {
                meta(
                        out,
                        "server exit code",
                        s.exitCode() == null ? null : s.exitCode().toString());
            }
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
            meta(out, "accelerator memory before", StepFacts.memory(s.memoryBeforeMib()));
            meta(out, "accelerator memory after", StepFacts.memory(s.memoryAfterMib()));
        }
        if (v != null) {
            meta(
                    out,
                    "prompt tokens",
                    v.promptTokens() == null
                            ? null
                            : Cells.tokens(v.promptTokens())
                                    + (v.exact() ? " (exact)" : " (target " + Cells.tokens(v.targetLen()) + ")"));
        }
        out.append("</dl>\n");
        if (f != null && !f.evidence().isEmpty()) {
            out.append("<pre class=\"evidence\">");
            f.evidence().forEach(line -> out.append(Html.escape(line)).append('\n'));
            out.append("</pre>\n");
        }
        requests(out, row.requests());
        if (row.serverArgs() != null && !row.serverArgs().isEmpty()) {
            out.append("<pre class=\"command\">")
                    .append(Html.escape(row.serverArgs()))
                    .append("</pre>\n");
        }
        out.append("</details></td></tr>\n");
    }

    /** Each request as the client timed it, warm-ups included; the upload time is apart from TTFT. */
    private static void requests(StringBuilder out, List<Scenario.Request> requests) {
        if (requests.isEmpty()) {
            return;
        }
        out.append("<table class=\"requests\">\n<thead><tr><th>#</th><th>kind</th><th>result</th><th>HTTP</th>")
                .append("<th>send ms</th><th>TTFT ms</th><th>e2e ms</th><th>prompt tokens</th>")
                .append("<th>output tokens</th></tr></thead>\n<tbody>\n");
        for (Scenario.Request r : requests) {
            out.append("<tr>");
            td(out, "num", Integer.toString(r.index()));
            td(out, null, r.warmup() ? "warm-up" : "measured");
            td(out, null, Html.escape(r.result()));
            td(out, "num", r.status() == 0 ? "" : Integer.toString(r.status()));
            td(out, "num", Cells.oneDecimal(r.sendMs()));
            td(out, "num", Cells.oneDecimal(r.ttftMs()));
            td(out, "num", Cells.oneDecimal(r.e2eMs()));
            td(out, "num", Cells.tokens(r.promptTokens()));
            td(out, "num", Cells.tokens(r.completionTokens()));
            out.append("</tr>\n");
        }
        out.append("</tbody></table>\n");
    }

    /**
     * A cause as HTML that wraps between words only, and after the slashes of a path: a seed's error names a log
     * path of a hundred characters, which would otherwise hold the column that wide.
     */
    private static String cause(String text) {
        return Html.escape(text).replace("/", "/<wbr>");
    }

    /** One cell of HTML already escaped, with its class ({@code num} right-aligns) or none. */
    private static void td(StringBuilder out, String cssClass, String html) {
        out.append(cssClass == null ? "<td>" : "<td class=\"" + cssClass + "\">")
                .append(html)
                .append("</td>");
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
