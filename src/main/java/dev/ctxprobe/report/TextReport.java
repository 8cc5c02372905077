package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text report for a terminal: the frontier lines, the frontier table, then one aligned step table per
 * input.
 */
final class TextReport implements ReportRenderer {

    @Override
    public String render(List<ReportInput> inputs) {
        Labels labels = Labels.of(inputs);
        StringBuilder out = new StringBuilder();
        List<Answer> answers = Answer.of(inputs, labels);
        if (answers.isEmpty()) {
            out.append("no steps yet\n");
        } else {
            Answer.lines(answers).forEach(line -> out.append(line).append('\n'));
            List<List<String>> rows = new ArrayList<>();
            rows.add(FrontierTable.headers(labels));
            answers.forEach(a -> rows.add(FrontierTable.row(a, labels)));
            out.append('\n').append(table(rows, FrontierTable.numeric(labels)));
            if (Predicted.any(answers)) {
                List<List<String>> predicted = new ArrayList<>();
                predicted.add(Predicted.HEADERS);
                predicted.addAll(Predicted.rows(answers));
                out.append("\npredicted before the first launch (ctxprobe plan) against measured\n")
                        .append(table(predicted, Predicted.NUMERIC));
            }
        }
        for (ReportInput input : inputs) {
            out.append('\n').append(heading(input, labels)).append('\n');
            if (input.document().scenarios().isEmpty()) {
                out.append("no steps yet\n");
                continue;
            }
            List<List<String>> rows = new ArrayList<>();
            rows.add(StepFacts.HEADERS);
            input.document().scenarios().forEach(s -> rows.add(StepFacts.cells(s)));
            out.append(table(rows, StepFacts.NUMERIC));
        }
        return out.toString();
    }

    private static String heading(ReportInput input, Labels labels) {
        String experiment = Cells.text(input.metadata().experiment());
        String runId = Cells.text(input.metadata().runId());
        String model = Cells.text(input.metadata().model());
        StringBuilder h = new StringBuilder("== ").append(Cells.oneLine(labels.of(input)));
        if (!experiment.isEmpty()) {
            h.append("  ").append(Cells.oneLine(experiment));
        }
        if (!runId.isEmpty()) {
            h.append("  run ").append(Cells.oneLine(runId));
        }
        if (input.inProgress()) {
            h.append("  (in progress: ")
                    .append(input.document().scenarios().size())
                    .append(" steps so far)");
        }
        h.append("\n   file ").append(Cells.oneLine(input.source()));
        if (!model.isEmpty()) {
            h.append("\n   model ").append(Cells.oneLine(model));
        }
        return h.toString();
    }

    /** Columns padded to their widest cell; the last column is not padded so lines carry no trailing blanks. */
    private static String table(List<List<String>> rows, List<Boolean> numeric) {
        int columns = rows.getFirst().size();
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], width(row.get(c)));
            }
        }
        StringBuilder out = new StringBuilder();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < columns; c++) {
                if (c > 0) {
                    line.append("  ");
                }
                line.append(c == columns - 1 ? row.get(c) : pad(row.get(c), widths[c], numeric.get(c)));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String pad(String cell, int width, boolean right) {
        String blanks = " ".repeat(Math.max(0, width - width(cell)));
        return right ? blanks + cell : cell + blanks;
    }

    private static int width(String cell) {
        return cell.codePointCount(0, cell.length());
    }
}
