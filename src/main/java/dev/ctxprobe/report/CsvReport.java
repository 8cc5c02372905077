package dev.ctxprobe.report;

import dev.ctxprobe.metrics.Stats;
import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.Metadata;
import dev.ctxprobe.results.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One CSV row per step of every input, flat columns, RFC 4180 quoting and CRLF line ends, so that {@code
 * pandas.read_csv(path)} loads it as is. The columns of the results file keep its keys' names; the first column is
 * the step's backend's frontier line.
 */
final class CsvReport implements ReportRenderer {
    private static final List<String> STATS = List.of("mean", "p50", "p90", "p95", "p99", "std", "min", "max", "count");

    /** One column: its header and how a step fills it; {@code text} marks cells that hold free text. */
    private record Column(String header, boolean text, Function<Step, String> value) {}

    private record Step(ReportInput input, Scenario row) {
        StepMetrics metrics() {
            return row.metrics();
        }

        Scenario.Server server() {
            return row.server();
        }

        Metadata run() {
            return input.metadata();
        }
    }

    private static final List<Column> COLUMNS = columns();

    @Override
    public String render(List<ReportInput> inputs) {
        StringBuilder out = new StringBuilder();
        out.append(COLUMNS.stream().map(Column::header).collect(Collectors.joining(",")))
                .append("\r\n");
        for (ReportInput input : inputs) {
            for (Scenario row : input.document().scenarios()) {
                Step step = new Step(input, row);
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
        // The backend's answer first, on each of its rows: a CSV has no place above its header for it.
        c.add(text(
                "frontier",
                s -> FrontierLine.answer(
                        s.input().frontier(s.row().backend()),
                        s.input().steps(s.row().backend()))));
        c.add(text("source", s -> s.input().source()));
        c.add(text("experiment", s -> s.run().experiment()));
        c.add(text("run_id", s -> s.run().runId()));
        c.add(text("hardware", s -> s.run().hardware()));
        c.add(text("accelerator", s -> s.run().accelerator()));
        c.add(text("model", s -> s.run().model()));
        c.add(text("backend", s -> s.row().backend()));
        c.add(text("engine", s -> s.input().engineOf(s.row().backend())));
        c.add(number("target_len", s -> Long.toString(s.row().targetLen())));
        c.add(number("max_model_len", s -> Long.toString(s.row().maxModelLen())));
        c.add(number("success", s -> Boolean.toString(s.row().success())));
        c.add(text("outcome", s -> s.row().outcome().id()));
        c.add(failure("failure_phase", Scenario.Failure::phase));
        c.add(failure("failure_class", Scenario.Failure::failureClass));
        c.add(failure("failure_detail", Scenario.Failure::detail));
        c.add(text("error", s -> s.row().error()));
        c.add(metric("success_count", m -> Integer.toString(m.successCount())));
        c.add(metric("total_count", m -> Integer.toString(m.totalCount())));
        c.add(metric("duration_s", m -> Cells.plainNumber(m.durationS())));
        c.add(metric("request_throughput", m -> Cells.plainNumber(m.requestThroughput())));
        c.add(metric("input_token_throughput", m -> Cells.plainNumber(m.inputTokenThroughput())));
        c.add(metric("output_token_throughput", m -> Cells.plainNumber(m.outputTokenThroughput())));
        c.add(metric("total_input_tokens", m -> Long.toString(m.totalInputTokens())));
        c.add(metric("total_output_tokens", m -> Long.toString(m.totalOutputTokens())));
        // The prefill rate as target / mean TTFT; input_token_throughput above divides by the whole duration.
        c.add(number("target_len_per_ttft_s", s -> Cells.plainNumber(StepFacts.prefillRate(s.row()))));
        addStats(c, "ttft_ms", StepMetrics::ttftMs);
        addStats(c, "e2e_ms", StepMetrics::e2eMs);
        addStats(c, "tpot_ms", StepMetrics::tpotMs);
        addStats(c, "itl_ms", StepMetrics::itlMs);
        c.add(number("send_ms_mean", s -> Cells.plainNumber(StepFacts.sendMsMean(s.row()))));
        c.add(server("server_id", true, Scenario.Server::id));
        c.add(server("startup_s", false, v -> Cells.plainNumber(v.startupS())));
        c.add(text("server_ended", s -> StepFacts.ended(s.row())));
        c.add(server("server_exit_code", false, v -> integer(v.exitCode())));
        c.add(server(
                "stopped_cleanly",
                false,
                v -> v.stoppedCleanly() == null ? null : v.stoppedCleanly().toString()));
        c.add(server("kv_capacity_tokens", false, v -> integer(v.kvCapacityTokens())));
        c.add(server("max_context_hint", false, v -> integer(v.maxContextHint())));
        c.add(server("memory_before_mib", true, v -> devices(v.memoryBeforeMib())));
        c.add(server("memory_after_mib", true, v -> devices(v.memoryAfterMib())));
        c.add(number(
                "prompt_tokens",
                s -> s.row().verification() == null
                        ? null
                        : integer(s.row().verification().promptTokens())));
        c.add(text("log", s -> s.row().log()));
        c.add(text("server_args", s -> s.row().serverArgs()));
        // What ctxprobe plan predicted for the step's backend before its first launch.
        c.add(number(
                "predicted_target",
                s -> Predicted.target(s.input().frontier(s.row().backend()))));
        c.add(text(
                "predicted_bound",
                s -> Predicted.bound(s.input().frontier(s.row().backend()))));
        return List.copyOf(c);
    }

    private static void addStats(List<Column> columns, String prefix, Function<StepMetrics, Stats> pick) {
        for (String stat : STATS) {
            columns.add(metric(prefix + "_" + stat, m -> {
                Stats stats = pick.apply(m);
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

    /** A column of the step's metrics: empty where the step has none. */
    private static Column metric(String header, Function<StepMetrics, String> value) {
        return number(header, s -> s.metrics() == null ? null : value.apply(s.metrics()));
    }

    /** A column of the step's failure: empty where it did not fail. */
    private static Column failure(String header, Function<Scenario.Failure, String> value) {
        return text(
                header,
                s -> s.row().failure() == null ? null : value.apply(s.row().failure()));
    }

    /** A column of what is known of the step's server: empty where nothing is. */
    private static Column server(String header, boolean text, Function<Scenario.Server, String> value) {
        return new Column(header, text, s -> s.server() == null ? null : value.apply(s.server()));
    }

    /** Per-device values joined by {@code ;}, which needs no quoting. */
    private static String devices(List<Long> mib) {
        return mib == null ? null : mib.stream().map(String::valueOf).collect(Collectors.joining(";"));
    }

    private static Column text(String header, Function<Step, String> value) {
        return new Column(header, true, value);
    }

    private static Column number(String header, Function<Step, String> value) {
        return new Column(header, false, value);
    }

    private static String integer(Number value) {
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
