package dev.ctxprobe.bench;

import dev.ctxprobe.metrics.Percentiles;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * One measured figure: what was measured, under which conditions, its value (or p50/p99/max of many
 * samples), its unit, and the bar it is held to (BENCHMARKS.md).
 *
 * @param bench the benchmark name
 * @param figure what is measured, e.g. {@code ttft_error_ms}
 * @param params the conditions (streams, tokens, heap, ...), in print order
 * @param values the numbers: {@code p50}, {@code p99}, {@code max}, {@code n}, or one {@code value}
 * @param unit the unit of every number in {@code values} except {@code n}
 * @param bar the bar in words, empty when none is set for this figure
 * @param meets whether the figure meets its bar, null when there is none
 */
record Figure(
        String bench,
        String figure,
        Map<String, Object> params,
        Map<String, Number> values,
        String unit,
        String bar,
        Boolean meets) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** p50, p99 and max of the samples (numpy's linear percentiles) and their count. */
    static Map<String, Number> spread(double[] samples) {
        Map<String, Number> v = new LinkedHashMap<>();
        v.put("p50", round(Percentiles.of(samples, 50)));
        v.put("p99", round(Percentiles.of(samples, 99)));
        v.put("max", round(Percentiles.of(samples, 100)));
        v.put("n", samples.length);
        return v;
    }

    static Map<String, Number> single(double value) {
        Map<String, Number> v = new LinkedHashMap<>();
        v.put("value", round(value));
        return v;
    }

    static Map<String, Number> count(long value) {
        Map<String, Number> v = new LinkedHashMap<>();
        v.put("value", value);
        return v;
    }

    static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    /** The JSON line: bench, figure, params, values, unit, bar and verdict, flat. */
    String json() {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("bench", bench);
        line.put("figure", figure);
        line.putAll(params);
        line.putAll(values);
        line.put("unit", unit);
        if (meets != null) {
            line.put("bar", bar);
            line.put("meets", meets);
        }
        return JSON.writeValueAsString(line);
    }

    String conditions() {
        StringBuilder s = new StringBuilder();
        params.forEach(
                (k, v) -> s.append(s.isEmpty() ? "" : " ").append(k).append('=').append(v));
        return s.toString();
    }

    String numbers() {
        StringBuilder s = new StringBuilder();
        values.forEach((k, v) -> {
            s.append(s.isEmpty() ? "" : " ").append(k).append('=');
            s.append(v instanceof Double d ? String.format(Locale.ROOT, "%.3f", d) : v.toString());
        });
        return s.toString();
    }

    String verdict() {
        return meets == null ? "" : (meets ? "ok" : "MISS") + " (" + bar + ")";
    }
}
