package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;

/** A plain-text report for a terminal: the frontier lines, then one aligned step table per input. */
final class TextReport implements ReportRenderer {

    @Override
    public String render(List<ResultSet> sets) {
        Labels labels = Labels.of(sets);
        StringBuilder out = new StringBuilder();
        List<FrontierView> views = FrontierView.of(sets, labels);
        int width = views.stream()
                .mapToInt(v -> Cells.oneLine(v.label()).length())
                .max()
                .orElse(0);
        for (FrontierView view : views) {
            out.append(pad(Cells.oneLine(view.label()), width, false))
                    .append("   ")
                    .append(view.line())
                    .append('\n');
        }
        if (views.isEmpty()) {
            out.append("no steps yet\n");
        }
        for (ResultSet set : sets) {
            out.append('\n').append(heading(set, labels)).append('\n');
            if (set.scenarios().isEmpty()) {
                out.append("no steps yet\n");
                continue;
            }
            List<List<String>> rows = new ArrayList<>();
            rows.add(StepCells.HEADERS);
            set.scenarios().forEach(s -> rows.add(StepCells.of(s)));
            out.append(table(rows, StepCells.NUMERIC));
        }
        return out.toString();
    }

    private static String heading(ResultSet set, Labels labels) {
        RunInfo run = set.run();
        StringBuilder h = new StringBuilder("== ").append(Cells.oneLine(labels.of(set)));
        if (!run.experiment().isEmpty()) {
            h.append("  ").append(Cells.oneLine(run.experiment()));
        }
        if (!run.runId().isEmpty()) {
            h.append("  run ").append(Cells.oneLine(run.runId()));
        }
        if (run.inProgress()) {
            h.append("  (in progress: ").append(set.scenarios().size()).append(" steps so far)");
        }
        h.append("\n   file ").append(Cells.oneLine(set.source()));
        if (!run.model().isEmpty()) {
            h.append("\n   model ").append(Cells.oneLine(run.model()));
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
