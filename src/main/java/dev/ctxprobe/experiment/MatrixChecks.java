package dev.ctxprobe.experiment;

import dev.ctxprobe.results.CellName;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checks of a {@code matrix} (docs/experiment-file.md#matrix), at the top level or in a backend: named
 * parameters, each with a list of values kept as the file writes them ({@code 0.90} stays {@code 0.90}, where YAML
 * would make it the number 0.9), and the cells they make, every combination in the file's order.
 */
final class MatrixChecks {
    private final ValueChecks values;

    MatrixChecks(ValueChecks values) {
        this.values = values;
    }

    /** The parameters of the matrix at {@code path}, in file order; empty when there is none. */
    Map<String, List<String>> check(String path, Map<String, Object> raw) throws ExperimentError {
        Map<String, List<String>> matrix = new LinkedHashMap<>();
        if (raw == null) {
            return matrix;
        }
        if (raw.isEmpty()) {
            throw values.error(path, path + " is empty: give parameters and their values, e.g. {kv: [f16, q8_0]}");
        }
        for (Map.Entry<String, Object> e : raw.entrySet()) {
            String key = e.getKey();
            String at = path + "." + key;
            if (!key.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw values.error(
                        at, "the parameter name '" + key + "' cannot be a placeholder: use letters, digits and '_'");
            }
            if (ExperimentLoader.BUILT_IN_PLACEHOLDERS.contains(key)
                    || ValueChecks.RESERVED_CONFIG_KEYS.contains(key)) {
                throw values.error(
                        at,
                        "'" + key + "' is set by ctxprobe (a placeholder or a key of the results' config) and"
                                + " cannot be a parameter: rename it");
            }
            if (!(e.getValue() instanceof List<?> list) || list.isEmpty()) {
                throw values.error(at, at + " is a list of the values to try, e.g. " + key + ": [f16, q8_0]");
            }
            List<String> written = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < list.size(); i++) {
                Object v = list.get(i);
                String vAt = at + "[" + i + "]";
                String text = values.written(vAt);
                if (!(v instanceof String || v instanceof Number || v instanceof Boolean) || text == null) {
                    throw values.error(vAt, "each value of " + at + " is a single text or number, e.g. 0.90");
                }
                if (!CellName.VALUE.matcher(text).matches()) {
                    throw values.error(
                            vAt,
                            "the value '" + text + "' names the cell and its log files: use letters, digits and"
                                    + " . _ + : @ % -");
                }
                if (!seen.add(text)) {
                    throw values.error(vAt, "the value " + text + " is listed twice in " + at);
                }
                written.add(text);
            }
            matrix.put(key, List.copyOf(written));
        }
        return matrix;
    }

    /** The top-level matrix with a backend's own on top: its parameters replace those of the same name. */
    static Map<String, List<String>> merged(Map<String, List<String>> top, Map<String, List<String>> own) {
        Map<String, List<String>> merged = new LinkedHashMap<>(top);
        merged.putAll(own);
        return merged;
    }

    /** Every combination of the values, the first parameter varying slowest; one empty cell for no matrix. */
    static List<Map<String, String>> cells(Map<String, List<String>> matrix) {
        List<Map<String, String>> cells = new ArrayList<>();
        cells.add(new LinkedHashMap<>());
        for (Map.Entry<String, List<String>> p : matrix.entrySet()) {
            List<Map<String, String>> next = new ArrayList<>();
            for (Map<String, String> cell : cells) {
                for (String value : p.getValue()) {
                    Map<String, String> c = new LinkedHashMap<>(cell);
                    c.put(p.getKey(), value);
                    next.add(c);
                }
            }
            cells = next;
        }
        return cells;
    }
}
