package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ResultReaderTest {
    @TempDir
    Path dir;

    private final ResultReader reader = new ResultReader();

    private Path write(String name, String content) throws Exception {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    @Test
    void readsCtxprobeExtensions() {
        ResultSet set = reader.readFile(ReportFixtures.SAMPLE);

        assertThat(set.run().hardware()).isEqualTo("1x NVIDIA L4 24GB");
        assertThat(set.run().inProgress()).isFalse();
        assertThat(set.scenarios()).hasSize(6);
        ScenarioRow refused = set.scenarios().getFirst();
        assertThat(refused.outcome()).isEqualTo("kv_insufficient");
        assertThat(refused.failure().phase()).isEqualTo("startup");
        assertThat(refused.failure().evidence()).hasSize(4).last().asString().contains("<script>");
        assertThat(refused.server().maxContextHint()).isEqualTo(12_512L);
        ScenarioRow ok = set.scenarios().get(1);
        assertThat(ok.metrics().ttftMs().count()).isEqualTo(3L);
        assertThat(ok.metrics().ttftMs().std()).isEqualTo(5.09);
        assertThat(ok.verification().exact()).isTrue();
        assertThat(set.frontiers())
                .extracting(FrontierSummary::backend, FrontierSummary::maxOkTarget, FrontierSummary::launches)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("vllm", 12_032L, 3),
                        org.assertj.core.groups.Tuple.tuple("sglang", 13_824L, 1));
        assertThat(set.frontiers().get(1).mode()).isEqualTo("restart_on_failure");
        assertThat(set.frontiers()).noneMatch(FrontierSummary::derived);
    }

    @Test
    void truncatedFileNamesTheFileAndThePosition() throws Exception {
        String full = Files.readString(ReportFixtures.SAMPLE);
        Path truncated = write("truncated.json", full.substring(0, full.length() / 2));

        assertThatThrownBy(() -> reader.readFile(truncated))
                .isInstanceOf(ReportInputException.class)
                .hasMessageStartingWith(truncated + ": not valid JSON at line ")
                .hasMessageContaining(", column ")
                .hasMessageContaining("end-of-input");
    }

    @Test
    void handBrokenFileNamesTheLineOfTheMistake() throws Exception {
        Path broken = write(
                "broken.json", "{\n  \"scenarios\": [\n    {\"backend\": \"vllm\",, \"target_len\": 1}\n  ]\n}\n");

        assertThatThrownBy(() -> reader.readFile(broken))
                .isInstanceOf(ReportInputException.class)
                .hasMessageContaining("at line 3, column ");
    }

    @Test
    void wrongTypeNamesTheKey() throws Exception {
        Path file = write(
                "typed.json",
                "{\"scenarios\": [{\"backend\": \"vllm\", \"target_len\": \"lots\", \"success\": true}]}");

        assertThatThrownBy(() -> reader.readFile(file))
                .isInstanceOf(ReportInputException.class)
                .hasMessage(file + ": scenarios[0].target_len: expected an integer, found the string \"lots\"");
    }

    @Test
    void fileWithoutScenariosIsNotAResultsFile() throws Exception {
        Path file = write("experiment.json", "{\"backends\": {}}");

        assertThatThrownBy(() -> reader.readFile(file)).hasMessageContaining("no 'scenarios' array");
        Path empty = write("empty.json", "");
        assertThatThrownBy(() -> reader.readFile(empty)).hasMessageContaining("empty");
    }

    @Test
    void missingInputIsAnError() {
        Path missing = dir.resolve("nope.json");
        assertThatThrownBy(() -> reader.read(List.of(missing)))
                .isInstanceOf(ReportInputException.class)
                .hasMessage(missing + ": no such file or folder");
    }

    @Test
    void readsTheP800SeedsKeyForTheLimit() throws Exception {
        Path file = write(
                "p800.json",
                "{\"scenarios\": [{\"backend\": \"sglang\", \"target_len\": 4096, \"max_context_len\": 5120,"
                        + " \"success\": false, \"metrics\": null, \"error\": \"boom\"}]}");

        ScenarioRow row = reader.readFile(file).scenarios().getFirst();
        assertThat(row.maxModelLen()).isEqualTo(5120L);
        assertThat(row.outcome()).isEqualTo(ScenarioRow.FAILED);
        assertThat(row.cause()).isEqualTo("boom");
    }

    @Test
    void folderOfRunFoldersYieldsEveryRun() throws Exception {
        String sample = Files.readString(ReportFixtures.SAMPLE);
        write("results/exp/20260101-000000/results.json", sample);
        write("results/exp/20260102-000000/results.json", sample);

        assertThat(reader.read(List.of(dir.resolve("results"))))
                .extracting(ResultSet::source)
                .containsExactly(
                        dir.resolve("results/exp/20260101-000000/results.json").toString(),
                        dir.resolve("results/exp/20260102-000000/results.json").toString());
        assertThat(reader.read(List.of(dir.resolve("results/exp/20260102-000000"))))
                .hasSize(1);
        Files.createDirectories(dir.resolve("nothing"));
        assertThatThrownBy(() -> reader.read(List.of(dir.resolve("nothing")))).hasMessageContaining("no results.json");
    }

    /** A run still going: fewer steps, no finished_at, a frontier section not yet written. */
    private Path inProgress() throws Exception {
        return write("running/results.json", """
                {"metadata": {"experiment": "e", "run_id": "20260711-090512", "hardware": "hw",
                              "tool": {"name": "ctxprobe", "version": "0.1.0"}, "started_at": "2026-07-11T09:05:12+00:00"},
                 "config": {},
                 "scenarios": [
                   {"backend": "vllm", "target_len": 16384, "max_model_len": 16640, "success": false,
                    "outcome": "kv_insufficient", "error": "server failed to start", "metrics": null}]}
                """);
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void runStillGoingAndFailedOnlyStepsRenderInEveryFormat(Format format) throws Exception {
        Path file = inProgress();
        ResultSet set = reader.readFile(file);
        assertThat(set.run().inProgress()).isTrue();
        FrontierSummary vllm = set.frontiers().getFirst();
        assertThat(vllm.derived()).isTrue();
        assertThat(vllm.maxOkTarget()).isNull();
        assertThat(vllm.minFailedTarget()).isEqualTo(16_384L);

        String report = Reports.render(List.of(file), format);
        assertThat(report).contains(format == Format.CSV ? "16384" : "16,384");
        if (format != Format.CSV) {
            assertThat(report).contains("in progress").contains("kv_insufficient");
        }
        if (format == Format.TEXT) {
            assertThat(report).contains("vllm   nothing passed (16,384 fails: kv_insufficient)  1 launch");
        }
    }

    @Test
    void derivedFrontierListsFailuresBelowAPassAndIgnoresBusyPorts() {
        List<ScenarioRow> rows = List.of(
                row(20_000, true, "ok"),
                row(29_000, false, "kv_insufficient"),
                row(35_000, true, "ok"),
                row(45_000, false, "port_busy"),
                row(50_000, false, "kv_insufficient"),
                row(60_000, false, "skipped"));

        FrontierSummary f = FrontierSummary.derive("vllm", rows);

        assertThat(f.maxOkTarget()).isEqualTo(35_000L);
        // The next failure is the one above the largest pass, as the search reports it; 29,000 is non-monotonic.
        assertThat(f.minFailedTarget()).isEqualTo(50_000L);
        assertThat(f.nonMonotonic()).containsExactly(29_000L);
        assertThat(f.launches()).isEqualTo(5);
    }

    private static ScenarioRow row(long target, boolean success, String outcome) {
        return new ScenarioRow("vllm", target, null, success, outcome, null, null, null, null, null, null, null);
    }
}
