package dev.ctxprobe.report;

import java.util.List;

/** A GitHub Markdown report: the frontier lines and table, then a section with a step table per input. */
final class MarkdownReport implements ReportRenderer {

    @Override
    public String render(List<ReportInput> inputs) {
        Labels labels = Labels.of(inputs);
        StringBuilder out = new StringBuilder("# ctxprobe report\n\n## Frontier\n\n");
        List<Answer> answers = Answer.of(inputs, labels);
        if (answers.isEmpty()) {
            out.append("No steps yet.\n");
        } else {
            // Each line as a list item, not a code block: a results file's text can close a code fence.
            Answer.lines(answers)
                    .forEach(line -> out.append("- ").append(escape(line)).append('\n'));
            out.append('\n');
            out.append(table(
                    FrontierTable.headers(labels),
                    answers.stream().map(a -> FrontierTable.row(a, labels)).toList()));
            if (SurfaceTable.any(answers)) {
                out.append("\n### Capacity map: the longest prompt held at once by N requests\n\n")
                        .append(table(SurfaceTable.headers(labels), SurfaceTable.rows(answers, labels)));
            }
            if (Predicted.any(answers)) {
                out.append("\n### Predicted before the first launch against measured\n\n")
                        .append(table(Predicted.HEADERS, Predicted.rows(answers)));
            }
            for (MatrixTables.Grid g : MatrixTables.of(answers, labels)) {
                out.append("\n### Matrix ")
                        .append(escape(g.title()))
                        .append("\n\nEach cell: frontier · what fails above it · TTFT there · prediction's error.\n\n")
                        .append(table(g.header(), MatrixTables.rows(g)))
                        .append('\n')
                        .append(MatrixTables.launches(g))
                        .append(".\n");
            }
            List<List<String>> compared = MatrixTables.compared(answers, labels, inputs);
            if (!compared.isEmpty()) {
                out.append("\n### Matrix cells compared by their parameters\n\n")
                        .append(table(compared.getFirst(), compared.subList(1, compared.size())));
            }
        }
        for (ReportInput input : inputs) {
            String experiment = Cells.text(input.metadata().experiment());
            out.append("\n## ").append(escape(labels.of(input)));
            if (!experiment.isEmpty()) {
                out.append(": ").append(escape(experiment));
            }
            out.append("\n\n");
            out.append("- file: ").append(escape(input.source())).append('\n');
            appendItem(out, "run", input.metadata().runId());
            appendItem(out, "model", input.metadata().model());
            appendItem(out, "accelerator", input.metadata().accelerator());
            appendItem(out, "engine", input.metadata().engine());
            if (input.inProgress()) {
                out.append("- status: in progress, ")
                        .append(input.document().scenarios().size())
                        .append(" steps so far\n");
            }
            out.append('\n');
            if (input.document().scenarios().isEmpty()) {
                out.append("No steps yet.\n");
                continue;
            }
            boolean checked = StepFacts.anyAnswer(input.document().scenarios());
            out.append(table(
                    StepFacts.headers(checked),
                    input.document().scenarios().stream()
                            .map(s -> StepFacts.cells(s, checked))
                            .toList()));
            List<String> roofline = Rooflines.lines(input.document());
            if (!roofline.isEmpty()) {
                out.append("\n**").append(escape(Rooflines.TITLE)).append("**\n\n");
                roofline.forEach(l -> out.append("- ").append(escape(l)).append('\n'));
            }
        }
        return out.toString();
    }

    private static void appendItem(StringBuilder out, String name, String value) {
        if (value != null && !value.isEmpty()) {
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
        String line = TerminalText.line(raw);
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
