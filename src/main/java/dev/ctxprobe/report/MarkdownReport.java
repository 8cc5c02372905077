package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;

/** A GitHub Markdown report: the frontier table, then a section with a step table per input. */
final class MarkdownReport implements ReportRenderer {

    @Override
    public String render(List<ResultSet> sets) {
        Labels labels = Labels.of(sets);
        StringBuilder out = new StringBuilder("# ctxprobe report\n\n## Frontier\n\n");
        List<FrontierView> views = FrontierView.of(sets, labels);
        if (views.isEmpty()) {
            out.append("No steps yet.\n");
        } else {
            List<String> headers = new ArrayList<>();
            if (labels.comparing()) {
                headers.add("hardware");
            }
            headers.addAll(List.of(
                    "backend",
                    "max passing",
                    "smallest failing",
                    "cause",
                    "launches",
                    "TTFT at max",
                    "non-monotonic",
                    "predicted max"));
            List<List<String>> rows = new ArrayList<>();
            for (FrontierView v : views) {
                FrontierSummary f = v.frontier();
                List<String> row = new ArrayList<>();
                if (labels.comparing()) {
                    row.add(labels.of(v.set()));
                }
                row.addAll(List.of(
                        f.backend(),
                        Cells.tokens(f.maxOkTarget()),
                        Cells.tokens(f.minFailedTarget()),
                        v.failureCause(),
                        Integer.toString(f.launches()),
                        v.ttftText().replaceFirst("^TTFT ", ""),
                        v.nonMonotonicText(),
                        Cells.tokens(f.predictedMax())));
                rows.add(row);
            }
            out.append(table(headers, rows));
        }
        for (ResultSet set : sets) {
            RunInfo run = set.run();
            out.append("\n## ").append(escape(labels.of(set)));
            if (!run.experiment().isEmpty()) {
                out.append(": ").append(escape(run.experiment()));
            }
            out.append("\n\n");
            out.append("- file: ").append(escape(set.source())).append('\n');
            appendItem(out, "run", run.runId());
            appendItem(out, "model", run.model());
            appendItem(out, "accelerator", run.accelerator());
            appendItem(out, "engine", run.engine());
            if (run.inProgress()) {
                out.append("- status: in progress, ")
                        .append(set.scenarios().size())
                        .append(" steps so far\n");
            }
            out.append('\n');
            if (set.scenarios().isEmpty()) {
                out.append("No steps yet.\n");
                continue;
            }
            out.append(table(
                    StepCells.HEADERS,
                    set.scenarios().stream().map(StepCells::of).toList()));
        }
        return out.toString();
    }

    private static void appendItem(StringBuilder out, String name, String value) {
        if (!value.isEmpty()) {
            out.append("- ").append(name).append(": ").append(escape(value)).append('\n');
        }
    }

    private static String table(List<String> headers, List<List<String>> rows) {
        StringBuilder out = new StringBuilder();
        out.append(row(headers));
        out.append("|").append(" --- |".repeat(headers.size())).append('\n');
        rows.forEach(r -> out.append(row(r)));
        return out.toString();
    }

    private static String row(List<String> cells) {
        StringBuilder out = new StringBuilder("|");
        cells.forEach(c -> out.append(' ').append(escape(c)).append(" |"));
        return out.append('\n').toString();
    }

    /**
     * Text from a results file as literal Markdown: backslash escapes for the characters that would start
     * markup or end a table cell, entities for the ones that would start HTML, and one line per cell. The
     * underscore stays: ids and paths are full of it, and GitHub does not read it inside a word as emphasis.
     */
    static String escape(String raw) {
        String line = Cells.oneLine(raw);
        StringBuilder out = new StringBuilder(line.length());
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '\\', '|', '`', '*', '[', ']', '~' -> out.append('\\').append(c);
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
