package dev.ctxprobe.results;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The name of a matrix cell, {@code base[k=v,...]}: the backend's name and its parameter values in the order the
 * file names the parameters, each as written (docs/experiment-file.md#matrix). The experiment names cells with it,
 * {@code run --backend} parses selectors with it, and the reports find a cell's backend by it.
 */
public final class CellName {
    /** A parameter's value: it becomes part of log file names, so only these characters. */
    public static final Pattern VALUE = Pattern.compile("[A-Za-z0-9._+:@%-]+");

    private CellName() {}

    /** {@code base[k=v,...]}, or {@code base} for no parameters. */
    public static String of(String base, Map<String, String> params) {
        if (params.isEmpty()) {
            return base;
        }
        StringBuilder s = new StringBuilder(base).append('[');
        params.forEach((k, v) -> s.append(s.charAt(s.length() - 1) == '[' ? "" : ",")
                .append(k)
                .append('=')
                .append(v));
        return s.append(']').toString();
    }

    /** The backend's own name: {@code name} up to its cell's values. */
    public static String base(String name) {
        int open = name.indexOf('[');
        return open < 0 ? name : name.substring(0, open);
    }

    /**
     * The values of {@code k=v,k2=v2} in order; empty when the text is not of that shape (a plain name).
     */
    public static Map<String, String> parse(String pairs) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String pair : pairs.split(",", -1)) {
            int eq = pair.indexOf('=');
            if (eq <= 0 || eq == pair.length() - 1) {
                return Map.of();
            }
            values.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        return values;
    }
}
