package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.MatrixGrid;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A matrix run's answers as grids (docs/results.md#matrix), in the words every format shares: per input and backend,
 * one parameter down, one across, a table for each combination of the rest; in each cell the frontier, what bounds
 * it, the TTFT there and how far the prediction was off. When several inputs are reported, their cells are also
 * matched by their parameters (not by name) and compared side by side.
 */
final class MatrixTables {
    private MatrixTables() {}

    /** One grid: its title, the parameter down and across, and the answers at each row and column. */
    record Grid(String title, String down, String across, List<String> columns, List<Row> rows) {

        /** The largest frontier of the grid, the heat map's full scale; null when nothing passed. */
        Long largest() {
            return rows.stream()
                    .flatMap(r -> r.cells().stream())
                    .filter(Objects::nonNull)
                    .map(a -> a.frontier().maxOkTarget())
                    .filter(Objects::nonNull)
                    .max(Long::compare)
                    .orElse(null);
        }

        /** The header row: {@code kv \ shape}, then the values across. */
        List<String> header() {
            List<String> h = new ArrayList<>();
            h.add(across == null ? down : down + " \\ " + across);
            h.addAll(across == null ? List.of("frontier") : columns);
            return h;
        }
    }

    /** The launches of a grid's cells: {@code 12 launches for 6 cells, 2.0 a cell}, the search's cost per cell. */
    static String launches(Grid g) {
        List<Answer> cells = g.rows().stream()
                .flatMap(r -> r.cells().stream())
                .filter(Objects::nonNull)
                .toList();
        int launches = cells.stream().mapToInt(a -> a.frontier().launches()).sum();
        return String.format(
                java.util.Locale.ROOT,
                "%d launches for %d cells, %.1f a cell",
                launches,
                cells.size(),
                cells.isEmpty() ? 0.0 : launches / (double) cells.size());
    }

    /** The values of one row and the answer of each column, null for a cell the input does not have. */
    record Row(String value, List<Answer> cells) {}

    /** The grids of every input that has matrix cells, in input order. */
    static List<Grid> of(List<Answer> answers, Labels labels) {
        Map<ReportInput, Map<String, Answer>> byInput = new LinkedHashMap<>();
        answers.forEach(a ->
                byInput.computeIfAbsent(a.input(), i -> new LinkedHashMap<>()).put(a.backend(), a));
        List<Grid> grids = new ArrayList<>();
        byInput.forEach((input, byName) -> {
            for (MatrixGrid g : input.document().grids()) {
                List<Row> rows = new ArrayList<>();
                for (String row : g.rows()) {
                    List<Answer> cells = new ArrayList<>();
                    for (String column : g.columns()) {
                        String name = g.at(row, column);
                        cells.add(name == null ? null : byName.get(name));
                    }
                    rows.add(new Row(row, cells));
                }
                String title = labels.comparing() ? labels.of(input) + " / " + g.title() : g.title();
                grids.add(new Grid(title, g.down(), g.across(), g.columns(), rows));
            }
        });
        return grids;
    }

    /**
     * A cell's text: {@code 42,496} and, as far as known, the failure that bounds it, the TTFT at it and the
     * prediction's error ({@code 42,496 · kv_insufficient · TTFT 9.9 s · predicted exact}); empty for no answer.
     */
    static List<String> parts(Answer a) {
        if (a == null) {
            return List.of();
        }
        Frontier f = a.frontier();
        List<String> parts = new ArrayList<>();
        parts.add(f.maxOkTarget() == null ? "none" : Cells.tokens(f.maxOkTarget()));
        String cause = a.cause();
        if (!cause.isEmpty()) {
            parts.add(TerminalText.line(cause));
        } else if (f.stoppedBecause() != null) {
            parts.add(TerminalText.line(f.stoppedBecause()));
        }
        Double ttft = a.ttftAtMaxMs();
        if (ttft != null) {
            parts.add("TTFT " + Cells.duration(ttft));
        }
        String against = Predicted.against(f);
        if (!against.isEmpty()) {
            parts.add("predicted " + against);
        }
        return parts;
    }

    /** The cell's text on one line. */
    static String text(Answer a) {
        return String.join(" · ", parts(a));
    }

    /** The rows of a grid as text cells, the row's value first. */
    static List<List<String>> rows(Grid g) {
        return g.rows().stream()
                .map(r -> {
                    List<String> cells = new ArrayList<>();
                    cells.add(TerminalText.line(r.value()));
                    r.cells().forEach(a -> cells.add(text(a)));
                    return cells;
                })
                .toList();
    }

    /**
     * The cells of several inputs matched by backend and parameters, whatever order each file gives its parameters
     * in: one row per cell, one frontier column per input that has it; empty with fewer than two inputs with cells.
     */
    static List<List<String>> compared(List<Answer> answers, Labels labels, List<ReportInput> inputs) {
        List<ReportInput> withCells =
                inputs.stream().filter(i -> !i.document().grids().isEmpty()).toList();
        if (withCells.size() < 2) {
            return List.of();
        }
        Map<CellKey, Map<ReportInput, Answer>> matched = new LinkedHashMap<>();
        for (Answer a : answers) {
            if (!a.frontier().params().isEmpty()) {
                CellKey key = new CellKey(
                        dev.ctxprobe.results.CellName.base(a.backend()),
                        a.frontier().params());
                matched.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(a.input(), a);
            }
        }
        List<List<String>> rows = new ArrayList<>();
        List<String> header = new ArrayList<>();
        header.add("cell");
        withCells.forEach(i -> header.add(labels.of(i)));
        rows.add(header);
        matched.forEach((key, byInput) -> {
            List<String> row = new ArrayList<>();
            row.add(TerminalText.line(key.name()));
            for (ReportInput i : withCells) {
                Answer a = byInput.get(i);
                row.add(a == null ? "" : text(a));
            }
            rows.add(row);
        });
        return rows;
    }

    /** A cell as two runs share it: the backend and the parameter values (map equality ignores their order). */
    private record CellKey(String base, Map<String, String> params) {
        String name() {
            return dev.ctxprobe.results.CellName.of(base, params);
        }
    }
}
