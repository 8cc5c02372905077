package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A plain-text report for a terminal: the frontier lines, the frontier table, then one aligned step table per
 * input. By default it fits {@link #WIDTH} columns (docs/results.md#reading-results): the columns the frontier lines
 * already say, and the wide rates, are left to {@code --wide}, Markdown and HTML; long headers take two lines; a
 * cause or sentence that does not fit is wrapped below its row.
 */
final class TextReport implements ReportRenderer {
    /** The terminal width the report fits unless {@code --wide}. */
    static final int WIDTH = 120;

    /** Frontier table columns a narrow report leaves out when it would not fit: the frontier lines say them. */
    private static final Set<String> FRONTIER_LINE_SAYS =
            Set.of("launches", "prefill tok/s at max (target / TTFT)", "non-monotonic", "search", "cause");

    /** Step table columns a narrow report leaves out when it would not fit: the seeds' rate, beside the prefill's. */
    private static final Set<String> WIDE_STEP_COLUMNS = Set.of("input tok/s (input tokens / duration)");

    /** The narrowest a wrapped last column may be before it goes below its row instead. */
    private static final int MIN_LAST = 48;

    private final boolean wide;

    TextReport() {
        this(false);
    }

    TextReport(boolean wide) {
        this.wide = wide;
    }

    @Override
    public String render(List<ReportInput> inputs) {
        Labels labels = Labels.of(inputs);
        StringBuilder out = new StringBuilder();
        List<Answer> answers = Answer.of(inputs, labels);
        if (answers.isEmpty()) {
            out.append("no steps yet\n");
        } else {
            int indent = Answer.lines(answers).isEmpty() ? 0 : labelWidth(answers) + 3;
            Answer.lines(answers).forEach(line -> out.append(wrap(line, indent)).append('\n'));
            List<List<String>> rows = new ArrayList<>();
            rows.add(FrontierTable.headers(labels));
            answers.forEach(a -> rows.add(FrontierTable.row(a, labels)));
            out.append('\n').append(table(rows, FrontierTable.numeric(labels), FRONTIER_LINE_SAYS));
            if (SurfaceTable.any(answers)) {
                List<List<String>> surface = new ArrayList<>();
                surface.add(SurfaceTable.headers(labels));
                surface.addAll(SurfaceTable.rows(answers, labels));
                out.append("\ncapacity map: the longest prompt held at once by N requests\n")
                        .append(table(surface, SurfaceTable.numeric(labels), Set.of()));
            }
            if (Predicted.any(answers)) {
                List<List<String>> predicted = new ArrayList<>();
                predicted.add(Predicted.HEADERS);
                predicted.addAll(Predicted.rows(answers));
                out.append("\npredicted before the first launch (ctxprobe plan) against measured\n")
                        .append(table(predicted, Predicted.NUMERIC, Set.of("largest passing")));
            }
            for (MatrixTables.Grid g : MatrixTables.of(answers, labels)) {
                List<List<String>> grid = new ArrayList<>();
                grid.add(g.header());
                grid.addAll(MatrixTables.rows(g));
                out.append("\nmatrix ")
                        .append(TerminalText.line(g.title()))
                        .append(": frontier · what fails above it · TTFT there · prediction's error\n")
                        .append(table(
                                stacked(grid),
                                java.util.Collections.nCopies(grid.getFirst().size(), false),
                                Set.of()))
                        .append(MatrixTables.launches(g))
                        .append('\n');
            }
            List<List<String>> compared = MatrixTables.compared(answers, labels, inputs);
            if (!compared.isEmpty()) {
                out.append("\nmatrix cells compared by their parameters\n")
                        .append(table(
                                stacked(compared),
                                java.util.Collections.nCopies(
                                        compared.getFirst().size(), false),
                                Set.of()));
            }
        }
        for (ReportInput input : inputs) {
            out.append('\n').append(heading(input, labels)).append('\n');
            if (input.document().scenarios().isEmpty()) {
                out.append("no steps yet\n");
                continue;
            }
            boolean checked = StepFacts.anyAnswer(input.document().scenarios());
            List<List<String>> rows = new ArrayList<>();
            rows.add(StepFacts.headers(checked));
            input.document().scenarios().forEach(s -> rows.add(StepFacts.cells(s, checked)));
            out.append(table(rows, StepFacts.numeric(checked), WIDE_STEP_COLUMNS));
            List<String> roofline = Rooflines.lines(input.document());
            if (!roofline.isEmpty()) {
                out.append('\n').append(Rooflines.TITLE).append('\n');
                roofline.forEach(l -> out.append(wrap("  " + l, 4)).append('\n'));
            }
        }
        return out.toString();
    }

    private static String heading(ReportInput input, Labels labels) {
        String experiment = Cells.text(input.metadata().experiment());
        String runId = Cells.text(input.metadata().runId());
        String model = Cells.text(input.metadata().model());
        StringBuilder h = new StringBuilder("== ").append(TerminalText.line(labels.of(input)));
        if (!experiment.isEmpty()) {
            h.append("  ").append(TerminalText.line(experiment));
        }
        if (!runId.isEmpty()) {
            h.append("  run ").append(TerminalText.line(runId));
        }
        if (input.inProgress()) {
            h.append("  (in progress: ")
                    .append(input.document().scenarios().size())
                    .append(" steps so far)");
        }
        h.append("\n   file ").append(TerminalText.line(input.source()));
        if (!model.isEmpty()) {
            h.append("\n   model ").append(TerminalText.line(model));
        }
        return h.toString();
    }

    /**
     * A matrix grid for a narrow report: each cell's parts ({@code 42,496 · kv_insufficient · TTFT 9.9 s}) one under
     * the other, so that a grid of several columns fits; a wide report keeps a cell on one line.
     */
    private List<List<String>> stacked(List<List<String>> grid) {
        if (wide) {
            return grid;
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(grid.getFirst());
        for (List<String> row : grid.subList(1, grid.size())) {
            List<String[]> parts = row.stream().map(c -> c.split(" · ")).toList();
            int lines = parts.stream().mapToInt(p -> p.length).max().orElse(1);
            for (int l = 0; l < lines; l++) {
                int line = l;
                rows.add(parts.stream().map(p -> line < p.length ? p[line] : "").toList());
            }
        }
        return rows;
    }

    private static int labelWidth(List<Answer> answers) {
        return answers.stream()
                .mapToInt(a -> width(TerminalText.line(a.label())))
                .max()
                .orElse(0);
    }

    /**
     * Columns padded to their widest cell; the last column is not padded so lines carry no trailing blanks. A narrow
     * report leaves out any column empty in every row, and the columns named in {@code wideOnly} when the table would
     * not fit {@link #WIDTH} with them; it puts a header's
     * parenthesis on a second line, and wraps a last cell that would pass {@link #WIDTH}.
     */
    private String table(List<List<String>> rows, List<Boolean> numeric, Set<String> wideOnly) {
        List<Integer> kept = new ArrayList<>();
        List<String> header = rows.getFirst();
        for (int c = 0; c < header.size(); c++) {
            int column = c;
            boolean empty = rows.stream().skip(1).allMatch(r -> r.get(column).isEmpty());
            if (wide || !(empty && rows.size() > 1)) {
                kept.add(c);
            }
        }
        // The columns said elsewhere go only when the table would not fit with them.
        if (!wide && naturalWidth(rows, kept) > WIDTH) {
            kept.removeIf(c -> wideOnly.contains(header.get(c)));
        }
        List<List<String>> headerLines = new ArrayList<>();
        List<List<String>> body = new ArrayList<>();
        if (wide) {
            headerLines.add(pick(header, kept));
        } else {
            // "prefill tok/s (target / TTFT)" over two lines: the name, then what it divides.
            List<String> first = new ArrayList<>();
            List<String> second = new ArrayList<>();
            for (int c : kept) {
                String h = header.get(c);
                int paren = h.indexOf(" (");
                first.add(paren < 0 ? h : h.substring(0, paren));
                second.add(paren < 0 ? "" : h.substring(paren + 1));
            }
            headerLines.add(first);
            if (second.stream().anyMatch(h -> !h.isEmpty())) {
                headerLines.add(second);
            }
        }
        rows.stream().skip(1).forEach(r -> body.add(pick(r, kept)));
        List<Boolean> right = kept.stream().map(numeric::get).toList();
        int columns = kept.size();
        int[] widths = new int[columns];
        for (List<String> row : headerLines) {
            for (int c = 0; c < columns; c++) {
                widths[c] = Math.max(widths[c], width(row.get(c)));
            }
        }
        for (List<String> row : body) {
            for (int c = 0; c < columns - 1; c++) {
                widths[c] = Math.max(widths[c], width(row.get(c)));
            }
        }
        if (!wide) {
            headerLines = lastHeaderWrapped(headerLines, widths);
        }
        StringBuilder out = new StringBuilder();
        headerLines.forEach(row -> out.append(line(row, widths, right)).append('\n'));
        body.forEach(row -> out.append(line(row, widths, right)).append('\n'));
        return out.toString();
    }

    /** The widest line of the table with these columns, headers split at their parenthesis. */
    private static int naturalWidth(List<List<String>> rows, List<Integer> kept) {
        int total = 0;
        for (int c : kept) {
            String h = rows.getFirst().get(c);
            int paren = h.indexOf(" (");
            int w = paren < 0 ? width(h) : Math.max(paren, width(h) - paren - 1);
            for (List<String> row : rows.subList(1, rows.size())) {
                w = Math.max(w, width(row.get(c)));
            }
            total += w + 2;
        }
        return total - 2;
    }

    /** The last header broken over the header lines where the columns before it leave it too little room. */
    private static List<List<String>> lastHeaderWrapped(List<List<String>> headerLines, int[] widths) {
        int last = widths.length - 1;
        int start = 0;
        for (int c = 0; c < last; c++) {
            start += widths[c] + 2;
        }
        int room = WIDTH - start;
        String text = String.join(
                " ",
                headerLines.stream()
                        .map(h -> h.get(last))
                        .filter(h -> !h.isEmpty())
                        .toList());
        if (last == 0 || width(text) <= room || room < 4) {
            return headerLines;
        }
        List<String> parts = words(text, room);
        List<List<String>> out = new ArrayList<>();
        for (int l = 0; l < Math.max(headerLines.size(), parts.size()); l++) {
            List<String> row = new ArrayList<>(
                    l < headerLines.size() ? headerLines.get(l) : java.util.Collections.nCopies(widths.length, ""));
            row.set(last, l < parts.size() ? parts.get(l) : "");
            out.add(row);
        }
        return out;
    }

    private static List<String> pick(List<String> row, List<Integer> kept) {
        return kept.stream().map(row::get).toList();
    }

    private String line(List<String> row, int[] widths, List<Boolean> right) {
        int columns = row.size();
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < columns - 1; c++) {
            if (c > 0) {
                line.append("  ");
            }
            line.append(pad(row.get(c), widths[c], right.get(c)));
        }
        String last = row.get(columns - 1);
        String start = columns > 1 ? line + "  " : line.toString();
        if (wide || width(start) + width(last) <= WIDTH) {
            return (start + last).stripTrailing();
        }
        int at = width(start);
        if (WIDTH - at >= MIN_LAST) {
            List<String> parts = words(last, WIDTH - at);
            StringBuilder wrapped = new StringBuilder(start + parts.getFirst());
            parts.stream()
                    .skip(1)
                    .forEach(p -> wrapped.append('\n').append(" ".repeat(at)).append(p));
            return wrapped.toString();
        }
        StringBuilder below = new StringBuilder(start.stripTrailing());
        words(last, WIDTH - 4).forEach(p -> below.append("\n    ").append(p));
        return below.toString();
    }

    /** A line of text wrapped at {@link #WIDTH}, its continuation lines indented by {@code indent}. */
    private String wrap(String text, int indent) {
        if (wide || width(text) <= WIDTH) {
            return text;
        }
        String body = text.stripLeading();
        String lead = text.substring(0, text.length() - body.length());
        int in = indent > WIDTH / 2 ? 4 : indent;
        String head = words(body, WIDTH - width(lead)).getFirst();
        StringBuilder out = new StringBuilder(lead).append(head);
        for (String p : words(body.substring(head.length()), WIDTH - in)) {
            out.append('\n').append(" ".repeat(in)).append(p);
        }
        return out.toString();
    }

    /**
     * Text broken into pieces of at most {@code max} columns: between the items of a line (two blanks) where one
     * ends far enough along, else at a blank, else (a path longer than the line) anywhere. The blanks inside a piece
     * are kept as they were.
     */
    private static List<String> words(String text, int max) {
        List<String> pieces = new ArrayList<>();
        String rest = text.strip();
        while (width(rest) > max) {
            int cut = rest.lastIndexOf("  ", max);
            if (cut < max / 2) {
                cut = rest.lastIndexOf(' ', max);
            }
            if (cut <= 0) {
                cut = Math.min(max, rest.length());
            }
            pieces.add(rest.substring(0, cut).stripTrailing());
            rest = rest.substring(cut).strip();
        }
        pieces.add(rest);
        return pieces;
    }

    private static String pad(String cell, int width, boolean right) {
        String blanks = " ".repeat(Math.max(0, width - width(cell)));
        return right ? blanks + cell : cell + blanks;
    }

    private static int width(String cell) {
        return cell.codePointCount(0, cell.length());
    }
}
