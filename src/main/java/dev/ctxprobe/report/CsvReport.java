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
        if (inputs.stream().anyMatch(i -> !i.document().grids().isEmpty())) {
            return cells(inputs);
        }
        List<Column> columns = columns(inputs);
        StringBuilder out = new StringBuilder();
        out.append(columns.stream().map(Column::header).collect(Collectors.joining(",")))
                .append("\r\n");
        for (ReportInput input : inputs) {
            for (Scenario row : input.document().scenarios()) {
                Step step = new Step(input, row);
                out.append(columns.stream()
                                .map(c -> field(c.value().apply(step), c.text()))
                                .collect(Collectors.joining(",")))
                        .append("\r\n");
            }
        }
        return out.toString();
    }

    /**
     * The columns, with {@code concurrency} after {@code target_len} only where some step sent more than one prompt
     * at once (docs/results.md#csv): a file of single prompts keeps the columns it always had.
     */
    private static List<Column> columns(List<ReportInput> inputs) {
        boolean concurrent =
                inputs.stream().flatMap(i -> i.document().scenarios().stream()).anyMatch(s -> s.concurrency() > 1);
        if (!concurrent) {
            return COLUMNS;
        }
        List<Column> c = new ArrayList<>(COLUMNS);
        int at = c.indexOf(c.stream()
                        .filter(col -> col.header().equals("target_len"))
                        .findFirst()
                        .orElseThrow())
                + 1;
        c.add(at, number("concurrency", s -> Integer.toString(s.row().concurrency())));
        return c;
    }

    /**
     * A matrix's CSV (docs/results.md#matrix): one row per cell, its parameters as columns in the experiment's order
     * (a parameter of another input's matrix left empty), so that a pivot table rebuilds the grid. A backend without
     * a matrix beside them gets its row with empty parameters.
     */
    private static String cells(List<ReportInput> inputs) {
        Labels labels = Labels.of(inputs);
        List<Answer> answers = Answer.of(inputs, labels);
        java.util.Set<String> params = new java.util.LinkedHashSet<>();
        for (ReportInput input : inputs) {
            input.document().grids().forEach(g -> {
                params.add(g.down());
                if (g.across() != null) {
                    params.add(g.across());
                }
                params.addAll(g.fixed().keySet());
            });
        }
        List<String> header = new ArrayList<>(List.of("source", "experiment", "run_id", "hardware", "backend", "cell"));
        header.addAll(params);
        header.addAll(List.of(
                "max_ok_target",
                "min_failed_target",
                "cause",
                "ttft_ms_at_max",
                "launches",
                "predicted_target",
                "predicted_bound",
                "measured_minus_predicted",
                "stopped_because"));
        StringBuilder out = new StringBuilder(String.join(",", header)).append("\r\n");
        for (Answer a : answers) {
            dev.ctxprobe.results.Frontier f = a.frontier();
            List<String> row = new ArrayList<>();
            row.add(field(a.input().source(), true));
            row.add(field(a.input().metadata().experiment(), true));
            row.add(field(a.input().metadata().runId(), true));
            row.add(field(a.input().metadata().hardware(), true));
            row.add(field(dev.ctxprobe.results.CellName.base(a.backend()), true));
            row.add(field(a.backend(), true));
            params.forEach(p -> row.add(field(f.params().get(p), true)));
            row.add(field(integer(f.maxOkTarget()), false));
            row.add(field(integer(f.minFailedTarget()), false));
            row.add(field(a.cause(), true));
            Double ttft = a.ttftAtMaxMs();
            row.add(ttft == null ? "" : String.format(java.util.Locale.ROOT, "%.1f", ttft));
            row.add(Integer.toString(f.launches()));
            row.add(Predicted.target(f));
            row.add(Predicted.bound(f));
            Long diff = Predicted.difference(f);
            row.add(diff == null ? "" : Long.toString(diff));
            row.add(field(f.stoppedBecause(), true));
            out.append(String.join(",", row)).append("\r\n");
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
        // The step against its prefill floor (docs/results.md, % of roofline): the headline assumption.
        c.add(number(
                "roofline_percent",
                s -> s.row().roofline() == null
                        ? null
                        : Cells.plainNumber(s.row().roofline().percent())));
        c.add(number(
                "roofline_floor_s",
                s -> s.row().roofline() == null
                        ? null
                        : Cells.plainNumber(s.row().roofline().floorS())));
        c.add(text(
                "roofline_flag",
                s -> s.row().roofline() == null ? null : s.row().roofline().flag()));
        c.add(text(
                "roofline_assumption",
                s -> s.row().roofline() == null ? null : s.row().roofline().assumption()));
        // The pass-key check (docs/results.md#answer): empty for a step not checked at all.
        c.add(text(
                "answer",
                s -> s.row().answer() == null ? null : s.row().answer().result()));
        c.add(text("answer_detail", s -> answerDetail(s.row())));
        c.add(number("passkey_ms", s -> Cells.plainNumber(s.row().passkeyMs())));
        return List.copyOf(c);
    }

    // What came back for a wrong answer, why for one not checked; nothing to add to a correct one.
    private static String answerDetail(Scenario s) {
        if (s.answer() == null || s.answer().correct()) {
            return null;
        }
        return s.answer().wrong() ? StepFacts.answer(s) : s.answer().reason();
    }

    private static void addStats(List<Column> columns, String prefix, Function<StepMetrics, Stats> pick) {
        for (String stat : STATS) {
            columns.add(metric(prefix + "_" + stat, m -> {
                Stats stats = pick.apply(m);
                // No samples (one output token has no TPOT, no gap between tokens): the statistics are unknown,
                // not 0; only the count says 0 (docs/results.md#metrics).
                if (stats.count() != null && stats.count() == 0 && !stat.equals("count")) {
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
