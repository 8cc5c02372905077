package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One CSV row per step of every input, flat columns, RFC 4180 quoting and CRLF line ends, so that {@code
 * pandas.read_csv(path)} loads it as is.
 */
final class CsvReport implements ReportRenderer {
    private static final List<String> STATS = List.of("mean", "p50", "p90", "p95", "p99", "std", "min", "max", "count");

    /** One column: its header and how a step fills it; {@code text} marks cells that hold free text. */
    private record Column(String header, boolean text, Function<Step, String> value) {}

    private record Step(ResultSet set, ScenarioRow row) {
        StepMetrics metrics() {
            return row.metrics();
        }
    }

    private static final List<Column> COLUMNS = columns();

    @Override
    public String render(List<ResultSet> sets) {
        StringBuilder out = new StringBuilder();
        out.append(COLUMNS.stream().map(Column::header).collect(Collectors.joining(",")))
                .append("\r\n");
        for (ResultSet set : sets) {
            for (ScenarioRow row : set.scenarios()) {
                Step step = new Step(set, row);
                out.append(COLUMNS.stream()
                                .map(c -> field(c.value().apply(step), c.text()))
                                .collect(Collectors.joining(",")))
                        .append("\r\n");
            }
        }
        return out.toString();
    }

    private static List<Column> columns() {
        List<Column> c = new ArrayList<>();
        c.add(text("source", s -> s.set().source()));
        c.add(text("experiment", s -> s.set().run().experiment()));
        c.add(text("run_id", s -> s.set().run().runId()));
        c.add(text("hardware", s -> s.set().run().hardware()));
        c.add(text("accelerator", s -> s.set().run().accelerator()));
        c.add(text("model", s -> s.set().run().model()));
        c.add(text("backend", s -> s.row().backend()));
        c.add(text("engine", s -> s.set().run().engineOf(s.row().backend())));
        c.add(number("target_len", s -> Long.toString(s.row().targetLen())));
        c.add(number("max_model_len", s -> integer(s.row().maxModelLen())));
        c.add(number("success", s -> Boolean.toString(s.row().success())));
        c.add(text("outcome", s -> s.row().outcome()));
        c.add(text(
                "failure_phase",
                s -> s.row().failure() == null ? null : s.row().failure().phase()));
        c.add(text(
                "failure_class",
                s -> s.row().failure() == null ? null : s.row().failure().failureClass()));
        c.add(text(
                "failure_detail",
                s -> s.row().failure() == null ? null : s.row().failure().detail()));
        c.add(text("error", s -> s.row().error()));
        c.add(number(
                "success_count",
                s -> s.metrics() == null ? null : integer(s.metrics().successCount())));
        c.add(number(
                "total_count",
                s -> s.metrics() == null ? null : integer(s.metrics().totalCount())));
        c.add(number(
                "duration_s",
                s -> s.metrics() == null ? null : Cells.plainNumber(s.metrics().durationS())));
        c.add(number(
                "request_throughput",
                s -> s.metrics() == null ? null : Cells.plainNumber(s.metrics().requestThroughput())));
        c.add(number(
                "input_token_throughput",
                s -> s.metrics() == null ? null : Cells.plainNumber(s.metrics().inputTokenThroughput())));
        c.add(number(
                "output_token_throughput",
                s -> s.metrics() == null ? null : Cells.plainNumber(s.metrics().outputTokenThroughput())));
        c.add(number(
                "total_input_tokens",
                s -> s.metrics() == null ? null : integer(s.metrics().totalInputTokens())));
        c.add(number(
                "total_output_tokens",
                s -> s.metrics() == null ? null : integer(s.metrics().totalOutputTokens())));
        addStats(c, "ttft_ms", StepMetrics::ttftMs);
        addStats(c, "e2e_ms", StepMetrics::e2eMs);
        addStats(c, "tpot_ms", StepMetrics::tpotMs);
        addStats(c, "itl_ms", StepMetrics::itlMs);
        c.add(number(
                "startup_s",
                s -> s.row().server() == null
                        ? null
                        : Cells.plainNumber(s.row().server().startupS())));
        c.add(number(
                "kv_capacity_tokens",
                s -> s.row().server() == null ? null : integer(s.row().server().kvCapacityTokens())));
        c.add(number(
                "max_context_hint",
                s -> s.row().server() == null ? null : integer(s.row().server().maxContextHint())));
        c.add(number(
                "prompt_tokens",
                s -> s.row().verification() == null
                        ? null
                        : integer(s.row().verification().promptTokens())));
        c.add(text("log", s -> s.row().log()));
        c.add(text("server_args", s -> s.row().serverArgs()));
        return List.copyOf(c);
    }

    private static void addStats(List<Column> columns, String prefix, Function<StepMetrics, Stats> pick) {
        for (String stat : STATS) {
            columns.add(number(prefix + "_" + stat, s -> {
                Stats stats = s.metrics() == null ? null : pick.apply(s.metrics());
                if (stats == null) {
                    return null;
                }
                return switch (stat) {
                    case "mean" -> Cells.plainNumber(stats.mean());
                    case "p50" -> Cells.plainNumber(stats.p50());
                    case "p90" -> Cells.plainNumber(stats.p90());
                    case "p95" -> Cells.plainNumber(stats.p95());
                    case "p99" -> Cells.plainNumber(stats.p99());
                    case "std" -> Cells.plainNumber(stats.std());
                    case "min" -> Cells.plainNumber(stats.min());
                    case "max" -> Cells.plainNumber(stats.max());
                    default -> integer(stats.count());
                };
            }));
        }
    }

    private static Column text(String header, Function<Step, String> value) {
        return new Column(header, true, value);
    }

    private static Column number(String header, Function<Step, String> value) {
        return new Column(header, false, value);
    }

    private static String integer(Long value) {
        return value == null ? null : value.toString();
    }

    /**
     * One RFC 4180 field. Free text that a spreadsheet would run as a formula ({@code =}, {@code +}, {@code
     * -}, {@code @} first) gets a leading apostrophe: a results file is untrusted input.
     */
    static String field(String value, boolean text) {
        if (value == null) {
            return "";
        }
        String v = value;
        if (text && !v.isEmpty() && "=+-@".indexOf(v.charAt(0)) >= 0) {
            v = "'" + v;
        }
        if (v.indexOf(',') >= 0 || v.indexOf('"') >= 0 || v.indexOf('\n') >= 0 || v.indexOf('\r') >= 0) {
            return '"' + v.replace("\"", "\"\"") + '"';
        }
        return v;
    }
}
