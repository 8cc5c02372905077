package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CSV parses back (RFC 4180, as pandas and Python's csv module read it) to the numbers in the file. */
class CsvReportTest {

    @Test
    void csvParsesBackToTheResults() {
        ResultSet set = new ResultReader().readFile(ReportFixtures.SAMPLE);
        List<Map<String, String>> rows = parse(Reports.renderSets(List.of(set), Format.CSV));

        assertThat(rows).hasSize(set.scenarios().size());
        assertThat(rows.getFirst().keySet())
                .startsWith("source", "experiment", "run_id", "hardware", "accelerator", "model", "backend", "engine")
                .contains("target_len", "max_model_len", "success", "outcome", "failure_phase", "failure_class")
                .contains("ttft_ms_mean", "ttft_ms_p50", "ttft_ms_p99", "ttft_ms_std", "ttft_ms_count", "e2e_ms_mean")
                .contains("input_token_throughput", "duration_s", "total_input_tokens", "server_args");
        for (int i = 0; i < rows.size(); i++) {
            ScenarioRow step = set.scenarios().get(i);
            Map<String, String> row = rows.get(i);
            assertThat(row.get("backend")).isEqualTo(step.backend());
            assertThat(Long.parseLong(row.get("target_len"))).isEqualTo(step.targetLen());
            assertThat(Boolean.parseBoolean(row.get("success"))).isEqualTo(step.success());
            assertThat(row.get("outcome")).isEqualTo(step.outcome());
            assertThat(row.get("error")).isEqualTo(step.error() == null ? "" : step.error());
            assertThat(row.get("server_args")).isEqualTo(step.serverArgs());
            if (step.metrics() != null) {
                assertThat(Double.parseDouble(row.get("ttft_ms_mean")))
                        .isEqualTo(step.metrics().ttftMs().mean());
                assertThat(Double.parseDouble(row.get("input_token_throughput")))
                        .isEqualTo(step.metrics().inputTokenThroughput());
                assertThat(Long.parseLong(row.get("ttft_ms_count")))
                        .isEqualTo(step.metrics().ttftMs().count());
            } else {
                assertThat(row.get("ttft_ms_mean")).isEmpty();
            }
        }
        assertThat(rows.getFirst().get("engine")).isEqualTo("vllm");
        assertThat(rows.getFirst().get("failure_class")).isEqualTo("kv_insufficient");
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
