package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.Scenario;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CSV parses back (RFC 4180, as pandas and Python's csv module read it) to the numbers in the file. */
class CsvReportTest {

    @Test
    void csvParsesBackToTheResults() {
        ReportInput input = ReportFixtures.sample();
        List<Map<String, String>> rows = parse(Reports.render(List.of(input), Format.CSV));

        List<Scenario> steps = input.document().scenarios();
        assertThat(rows).hasSize(steps.size());
        assertThat(rows.getFirst().keySet())
                .startsWith(
                        "frontier",
                        "source",
                        "experiment",
                        "run_id",
                        "hardware",
                        "accelerator",
                        "model",
                        "backend",
                        "engine")
                .contains("target_len", "max_model_len", "success", "outcome", "failure_phase", "failure_class")
                .contains("ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p99", "ttft_ms_std", "ttft_ms_count", "e2e_ms_mean")
                .contains("input_token_throughput", "target_len_per_ttft_s", "duration_s", "total_input_tokens")
                .contains("send_ms_mean", "server_id", "server_ended", "memory_before_mib", "server_args");
        for (int i = 0; i < rows.size(); i++) {
            Scenario step = steps.get(i);
            Map<String, String> row = rows.get(i);
            assertThat(row.get("frontier"))
                    .isEqualTo(FrontierLine.answer(input.frontier(step.backend()), input.steps(step.backend())));
            assertThat(row.get("backend")).isEqualTo(step.backend());
            assertThat(Long.parseLong(row.get("target_len"))).isEqualTo(step.targetLen());
            assertThat(Boolean.parseBoolean(row.get("success"))).isEqualTo(step.success());
            assertThat(row.get("outcome")).isEqualTo(step.outcome().id());
            assertThat(row.get("error")).isEqualTo(step.error() == null ? "" : step.error());
            assertThat(row.get("server_args")).isEqualTo(step.serverArgs());
            assertThat(row.get("server_id")).isEqualTo(step.server().id());
            if (step.metrics() != null) {
                assertThat(Double.parseDouble(row.get("ttft_ms_mean")))
                        .isEqualTo(step.metrics().ttftMs().mean());
                assertThat(Double.parseDouble(row.get("input_token_throughput")))
                        .isEqualTo(step.metrics().inputTokenThroughput());
                assertThat(Double.parseDouble(row.get("target_len_per_ttft_s")))
                        .isEqualTo(step.targetLen() / (step.metrics().ttftMs().mean() / 1000));
                assertThat(Integer.parseInt(row.get("ttft_ms_count")))
                        .isEqualTo(step.metrics().ttftMs().count());
                assertThat(Double.parseDouble(row.get("send_ms_mean"))).isPositive();
            } else {
                assertThat(row.get("ttft_ms_mean")).isEmpty();
            }
        }
        assertThat(rows.getFirst().get("engine")).isEqualTo("vllm");
        assertThat(rows).anySatisfy(r -> assertThat(r.get("failure_class")).isEqualTo("kv_insufficient"));
    }

    @Test
    void aSeedsAbsentValuesAreEmptyCellsNotZeros() {
        List<Map<String, String>> rows = parse(Reports.render(
                ReportFixtures.read(ReportFixtures.SEEDS.resolve("dsv4_p800_max_context_length.json")), Format.CSV));

        assertThat(rows.getFirst().get("ttft_ms_p90")).isEqualTo("0");
        assertThat(rows.getFirst().get("ttft_ms_count")).isEmpty();
        assertThat(rows.getFirst().get("ttft_ms_std")).isEmpty();
        assertThat(rows.getFirst().get("outcome")).isEqualTo("ok");
        assertThat(rows.getLast().get("outcome")).isEqualTo("failed");
        assertThat(rows.getLast().get("success_count")).isEmpty();
    }

    @Test
    void quotesFieldsAndDisarmsFormulas() {
        assertThat(CsvReport.field("a,b", true)).isEqualTo("\"a,b\"");
        assertThat(CsvReport.field("say \"hi\"", true)).isEqualTo("\"say \"\"hi\"\"\"");
        assertThat(CsvReport.field("two\nlines", true)).isEqualTo("\"two\nlines\"");
        assertThat(CsvReport.field("=HYPERLINK(\"x\")", true)).isEqualTo("\"'=HYPERLINK(\"\"x\"\")\"");
        assertThat(CsvReport.field("-1.5", false)).isEqualTo("-1.5");
        assertThat(CsvReport.field(null, false)).isEmpty();
    }

    /** A strict RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks. */
    private static List<Map<String, String>> parse(String csv) {
        List<List<String>> records = new ArrayList<>();
        List<String> record = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < csv.length(); i++) {
            char c = csv.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < csv.length() && csv.charAt(i + 1) == '"') {
                    field.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    field.append(c);
                }
            } else if (c == '"') {
                assertThat(field).as("a quote only opens a field").isEmpty();
                quoted = true;
            } else if (c == ',') {
                record.add(field.toString());
                field.setLength(0);
            } else if (c == '\r') {
                assertThat(csv.charAt(i + 1)).as("records end with CRLF").isEqualTo('\n');
                record.add(field.toString());
                field.setLength(0);
                records.add(record);
                record = new ArrayList<>();
                i++;
            } else {
                field.append(c);
            }
        }
        assertThat(quoted).isFalse();
        assertThat(record).isEmpty();
        List<String> header = records.getFirst();
        List<Map<String, String>> rows = new ArrayList<>();
        for (List<String> r : records.subList(1, records.size())) {
            assertThat(r).hasSameSizeAs(header);
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < header.size(); i++) {
                row.put(header.get(i), r.get(i));
            }
            rows.add(row);
        }
        return rows;
    }
}
