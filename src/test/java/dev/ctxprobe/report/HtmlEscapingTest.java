package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/** Everything a results file or a log line says reaches a report as text, never as markup or script. */
class HtmlEscapingTest {
    private static final String SCRIPT = "<script>alert(1)</script>";

    @TempDir
    Path dir;

    /** A results file with script in every string a report shows: names, errors, evidence, paths. */
    private Path hostileResults() throws Exception {
        String s = SCRIPT.replace("\"", "\\\"");
        String json = """
                {"metadata": {"experiment": "%1$s", "run_id": "%1$s", "hardware": "%1$s", "model": "%1$s",
                              "backend": "%1$s", "engine": "x", "description": "%1$s"},
                 "scenarios": [
                   {"backend": "%1$s", "target_len": 4096, "max_model_len": 4352, "success": true,
                    "server_args": "serve %1$s", "error": null, "log": "logs/%1$s.log",
                    "metrics": {"success_count": 1, "total_count": 1, "duration_s": 0.5, "request_throughput": 2.0,
                                "input_token_throughput": 8192.0, "output_token_throughput": 2.0,
                                "total_input_tokens": 4096, "total_output_tokens": 1,
                                "ttft_ms": {"mean": 400.0, "p50": 400.0, "p90": 400.0, "p95": 400.0, "p99": 400.0},
                                "e2e_ms": {"mean": 401.0, "p50": 401.0, "p90": 401.0, "p95": 401.0, "p99": 401.0},
                                "tpot_ms": {"mean": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0},
                                "itl_ms": {"mean": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0}},
                    "server": {"id": "%1$s", "ended": {"exit_code": null, "signal": 9, "reason": "stopped",
                                                      "detail": "%1$s"},
                               "memory_before_mib": [1, 2]},
                    "requests": [{"index": 0, "warmup": false, "result": "%1$s", "status": 200, "ttft_ms": 400.0,
                                  "e2e_ms": 401.0, "send_ms": 0.5, "prompt_tokens": 4096, "completion_tokens": 1}]},
                   {"backend": "%1$s", "target_len": 8192, "max_model_len": 8448, "success": false,
                    "outcome": "startup_crash", "error": "crashed: %1$s",
                    "failure": {"phase": "startup", "class": "startup_crash", "detail": "%1$s",
                                "evidence": ["line one %1$s", "\\u001b[31mred\\u001b[0m %1$s"],
                                "log": "logs/%1$s.log", "exit_code": 139},
                    "metrics": null}],
                 "frontier": {"%1$s": {"max_ok_target": 4096, "min_failed_target": 8192, "launches": 2,
                                       "non_monotonic": [], "mode": "%1$s", "strategy": "%1$s",
                                       "stopped_because": "%1$s"}}}
                """.formatted(s);
        Path file = dir.resolve("results.json");
        Files.writeString(file, json, StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void htmlShowsScriptFromResultsAndLogsAsText() throws Exception {
        String html = Reports.renderFiles(List.of(hostileResults()), Format.HTML);

        assertThat(html.toLowerCase(Locale.ROOT)).doesNotContain("<script");
        assertThat(html).contains("&lt;script&gt;alert(1)&lt;/script&gt;");
        assertThat(html).contains("line one &lt;script&gt;");
        // A terminal escape in a log line is shown, not passed through.
        assertThat(html).doesNotContain("\u001b").contains("\\u001b[31mred");
        // Even if escaping failed somewhere, the page forbids scripts and network access.
        assertThat(html).contains("Content-Security-Policy\" content=\"default-src 'none';");
    }

    @Test
    void svgChartsCarryHostileSeriesNamesAsEscapedText() throws Exception {
        String html = Reports.renderFiles(List.of(hostileResults()), Format.HTML);
        var svgs = Pattern.compile("<svg id=.*?</svg>", Pattern.DOTALL)
                .matcher(html)
                .results()
                .map(m -> m.group())
                .toList();
        assertThat(svgs).hasSize(2);
        for (String svg : svgs) {
            assertThat(svg).contains("&lt;script&gt;alert(1)&lt;/script&gt;");
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setNamespaceAware(true);
            Document doc =
                    factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
            assertThat(doc.getElementsByTagName("script").getLength()).isZero();
            assertThat(doc.getDocumentElement().getTextContent()).contains(SCRIPT);
        }
    }

    @Test
    void markdownAndTextKeepMarkupAndControlCharactersInert() throws Exception {
        Path file = hostileResults();
        String md = Reports.renderFiles(List.of(file), Format.MD);
        assertThat(md).doesNotContain("<script").contains("&lt;script&gt;");

        String text = Reports.renderFiles(List.of(file), Format.TEXT);
        assertThat(text).doesNotContain("\u001b");
    }

    @Test
    void markdownEscapesTableBreakingCharacters() {
        assertThat(MarkdownReport.escape("a | b\nc <i>*d*</i>")).isEqualTo("a \\| b c &lt;i&gt;\\*d\\*&lt;/i&gt;");
    }
}
