package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Command lines that must be refused, or only planned, before anything is launched. */
class RunCommandTest {
    @TempDir
    Path dir;

    private CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    void dryRunPrintsThePlanAndCreatesNothing() {
        CliRun r = run(
                "run",
                "experiments/dsv4-h200.yaml",
                "--dry-run",
                "--backend",
                "vllm",
                "--out",
                dir.resolve("o").toString());
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("backend vllm")
                .doesNotContain("backend sglang")
                .contains("--max-model-len 66560");
        assertThat(dir.resolve("o")).doesNotExist();
    }

    @Test
    void theStrategyCanBeOverridden() {
        CliRun r = run("run", "experiments/dsv4-p800.yaml", "--dry-run", "--strategy", "frontier");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("strategy frontier").contains("target 262144");
    }

    @Test
    void anUnknownBackendIsAUsageError() {
        CliRun r = run("run", "experiments/dsv4-h200.yaml", "--backend", "trt", "--out", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("no backend named trt").contains("sglang, vllm");
    }

    @Test
    void anUnknownStrategyIsAUsageError() {
        CliRun r = run("run", "experiments/dsv4-h200.yaml", "--strategy", "random", "--out", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("'list' or 'frontier'");
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        assertThat(run("run", "--bogus").exitCode()).isEqualTo(2);
    }

    @Test
    void aMissingFileIsAUsageError() {
        CliRun r = run("validate", dir.resolve("nope.yaml").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("no such file");
    }

    @Test
    void resumingSomethingThatIsNoRunFolderIsAUsageError() {
        CliRun r = run("run", "--resume", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("not a ctxprobe run folder");
    }

    @Test
    void theBuiltInDemoValidates() {
        CliRun r = run("run", "--dry-run");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("experiment demo").contains("ctxprobe serve");
    }
}
