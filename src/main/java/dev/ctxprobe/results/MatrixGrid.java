package dev.ctxprobe.results;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The layout of a matrix's cells as tables (docs/results.md#matrix): per backend, its first parameter down, its second
 * across, and one table for every combination of the rest. Parameters and values keep the experiment's order, never
 * the alphabet's. {@code plan} lays out predictions with it, the reports answers.
 *
 * @param base the backend's name
 * @param down the parameter whose values are the rows
 * @param across the parameter whose values are the columns; null for a matrix of one parameter
 * @param fixed the values of the other parameters this table holds; empty for a matrix of one or two
 * @param rows the values of {@code down}, in order
 * @param columns the values of {@code across}, in order; one empty value when there is no second parameter
 * @param cells per row, the name of the cell (a backend of the run) in each column; null for one not run
 */
public record MatrixGrid(
        String base,
        String down,
        String across,
        Map<String, String> fixed,
        List<String> rows,
        List<String> columns,
        List<List<String>> cells) {

    /** One cell: its name and parameter values. */
    public record Cell(String name, Map<String, String> params) {}

    /** The name of the cell at {@code row} and {@code column}, or null for a cell that was not run. */
    public String at(String row, String column) {
        int r = rows.indexOf(row);
        int c = columns.indexOf(column);
        return r < 0 || c < 0 ? null : cells.get(r).get(c);
    }

    /** The table's title: {@code embedded}, or {@code embedded with np=2} for one of several. */
    public String title() {
        if (fixed.isEmpty()) {
            return base;
        }
        List<String> pairs = new ArrayList<>();
        fixed.forEach((k, v) -> pairs.add(k + "=" + v));
        return base + " with " + String.join(", ", pairs);
    }

    /**
     * The tables of {@code cells}, the cells of a run or a plan in any order; a cell without parameters is none.
     *
     * @param order each backend's parameters and their values in the experiment's order, where known (a plan's
     *     backends, the results' {@code config.matrix}); a value missing from it goes after those there, in the
     *     order the cells come
     */
    public static List<MatrixGrid> of(List<Cell> cells, Map<String, Map<String, List<String>>> order) {
        Map<String, List<Cell>> byBase = new LinkedHashMap<>();
        for (Cell c : cells) {
            if (!c.params().isEmpty()) {
                byBase.computeIfAbsent(CellName.base(c.name()), b -> new ArrayList<>())
                        .add(c);
            }
        }
        List<MatrixGrid> grids = new ArrayList<>();
        byBase.forEach((base, own) -> grids.addAll(tables(base, own, order.getOrDefault(base, Map.of()))));
        return grids;
    }

    /** The parameters and their values in the order the experiment's backends (cells in file order) give them. */
    public static Map<String, Map<String, List<String>>> orderOf(List<Cell> cellsInFileOrder) {
        Map<String, Map<String, Set<String>>> seen = new LinkedHashMap<>();
        for (Cell c : cellsInFileOrder) {
            if (c.params().isEmpty()) {
                continue;
            }
            Map<String, Set<String>> own = seen.computeIfAbsent(CellName.base(c.name()), b -> new LinkedHashMap<>());
            c.params()
                    .forEach((k, v) ->
                            own.computeIfAbsent(k, x -> new LinkedHashSet<>()).add(v));
        }
        Map<String, Map<String, List<String>>> order = new LinkedHashMap<>();
        seen.forEach((base, params) -> {
            Map<String, List<String>> p = new LinkedHashMap<>();
            params.forEach((k, v) -> p.put(k, List.copyOf(v)));
            order.put(base, p);
        });
        return order;
    }

    private static List<MatrixGrid> tables(String base, List<Cell> cells, Map<String, List<String>> known) {
        Map<String, List<String>> values = new LinkedHashMap<>();
        known.forEach((k, v) -> values.put(k, new ArrayList<>(v)));
        for (Cell c : cells) {
            c.params().forEach((k, v) -> {
                List<String> vs = values.computeIfAbsent(k, x -> new ArrayList<>());
                if (!vs.contains(v)) {
                    vs.add(v);
                }
            });
        }
        values.values().removeIf(List::isEmpty);
        List<String> keys = new ArrayList<>(values.keySet());
        String down = keys.get(0);
        String across = keys.size() > 1 ? keys.get(1) : null;
        List<String> rest = keys.size() > 2 ? keys.subList(2, keys.size()) : List.of();
        List<Map<String, String>> fixedCombos = new ArrayList<>();
        fixedCombos.add(new LinkedHashMap<>());
        for (String k : rest) {
            List<Map<String, String>> next = new ArrayList<>();
            for (Map<String, String> f : fixedCombos) {
                for (String v : values.get(k)) {
                    Map<String, String> g = new LinkedHashMap<>(f);
                    g.put(k, v);
                    next.add(g);
                }
            }
            fixedCombos = next;
        }
        List<MatrixGrid> tables = new ArrayList<>();
        for (Map<String, String> fixed : fixedCombos) {
            Map<List<String>, String> at = new LinkedHashMap<>();
            for (Cell c : cells) {
                boolean inTable = fixed.entrySet().stream()
                        .allMatch(e -> e.getValue().equals(c.params().get(e.getKey())));
                if (inTable) {
                    String row = c.params().getOrDefault(down, "");
                    String column = across == null ? "" : c.params().getOrDefault(across, "");
                    at.put(List.of(row, column), c.name());
                }
            }
            if (!at.isEmpty()) {
                List<String> rows = List.copyOf(values.get(down));
                List<String> columns = across == null ? List.of("") : List.copyOf(values.get(across));
                List<List<String>> names = new ArrayList<>();
                for (String r : rows) {
                    List<String> row = new ArrayList<>();
                    columns.forEach(c -> row.add(at.get(List.of(r, c))));
                    names.add(java.util.Collections.unmodifiableList(row));
                }
                tables.add(new MatrixGrid(
                        base,
                        down,
                        across,
                        fixed.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(fixed),
                        rows,
                        columns,
                        List.copyOf(names)));
            }
        }
        return tables;
    }
}
