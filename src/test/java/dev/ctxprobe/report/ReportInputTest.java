package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.Frontier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What a report makes of an input: its backends, their answers, a run still going. */
class ReportInputTest {
    @TempDir
    Path dir;

    /** A run still going: one step so far, no finished_at, a frontier section not yet written. */
    private Path inProgress() throws Exception {
        Path file = dir.resolve("running/results.json");
        Files.createDirectories(file.getParent());
        Files.writeString(file, """
                {"metadata": {"experiment": "e", "run_id": "20260711-090512", "hardware": "hw",
                              "tool": {"name": "ctxprobe", "version": "0.1.0"}, "started_at": "2026-07-11T09:05:12+00:00"},
                 "config": {},
                 "scenarios": [
                   {"backend": "vllm", "target_len": 16384, "max_model_len": 16640, "success": false,
                    "outcome": "kv_insufficient", "error": "server failed to start", "metrics": null}]}
                """, StandardCharsets.UTF_8);
        return file;
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void aRunStillGoingWithOnlyAFailureRendersInEveryFormat(Format format) throws Exception {
        Path file = inProgress();
        ReportInput input = Reports.read(List.of(file)).getFirst();
        assertThat(input.inProgress()).isTrue();
        assertThat(input.derived("vllm")).isTrue();
        Frontier vllm = input.frontier("vllm");
        assertThat(vllm.maxOkTarget()).isNull();
        assertThat(vllm.minFailedTarget()).isEqualTo(16_384L);

        String report = Reports.renderFiles(List.of(file), format);
        assertThat(report).contains("nothing fits (smallest tried 16,384 fails: kv_insufficient)  1 launch");
        if (format != Format.CSV) {
            assertThat(report).contains("in progress");
        }
        if (format == Format.TEXT) {
            assertThat(report.lines().findFirst().orElseThrow())
                    .isEqualTo("vllm   nothing fits (smallest tried 16,384 fails: kv_insufficient)  1 launch");
        }
    }

    @Test
    void theFileSAnswerIsUsedWhereItHasOneAndTheStepsAnswerElsewhere() throws Exception {
        ReportInput sample = Reports.read(List.of(ReportFixtures.SAMPLE)).getFirst();
        assertThat(sample.backends()).containsExactly("vllm", "sglang");
        assertThat(sample.derived("vllm")).isFalse();
        assertThat(sample.frontier("vllm"))
                .isSameAs(sample.document().frontier().get("vllm"));

        ReportInput seed = Reports.read(List.of(ReportFixtures.SEEDS.resolve("dsv4_h200_max_context_length.json")))
                .getFirst();
        assertThat(seed.derived("vllm")).isTrue();
        assertThat(seed.frontier("vllm")).isEqualTo(Frontier.ofSteps(seed.steps("vllm")));
        assertThat(seed.engineOf("vllm")).isEqualTo("vllm");
    }
}
