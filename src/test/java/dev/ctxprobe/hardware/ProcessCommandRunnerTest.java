package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessCommandRunnerTest {

    private final ProcessCommandRunner runner = new ProcessCommandRunner(Duration.ofSeconds(5), 1000);

    @Test
    void absentToolIsReportedAsNotInstalled() {
        CommandResult r = runner.run(List.of("ctxprobe-no-such-tool-xyz", "--version"));
        assertThat(r.absent()).isTrue();
        assertThat(r.failure()).isEqualTo("ctxprobe-no-such-tool-xyz: not installed (not on PATH)");
    }

    @Test
    void onlyABareNameThatNoPathEntryHoldsIsAbsentBeforeStarting(@TempDir Path dir) throws Exception {
        assertThat(ProcessCommandRunner.onPath("sh")).isTrue();
        assertThat(ProcessCommandRunner.onPath("ctxprobe-no-such-tool-xyz")).isFalse();
        // A path is left to the start, which tells a missing file from one that cannot run.
        assertThat(ProcessCommandRunner.onPath(dir.resolve("missing").toString()))
                .isTrue();
        Path notExecutable = Files.writeString(dir.resolve("tool"), "#!/bin/sh\n");
        CommandResult r = runner.run(List.of(notExecutable.toString()));
        assertThat(r.absent()).isFalse();
        assertThat(r.failure()).contains("Permission denied");
    }

    @Test
    void keepsExitCodeAndBothStreams() {
        CommandResult r = runner.run(List.of("sh", "-c", "echo out; echo err >&2; exit 3"));
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("out\n");
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(r.succeeded()).isFalse();
        assertThat(r.failure()).isEqualTo("sh: exit code 3 (out)");
    }

    @Test
    void capsTheOutput() {
        CommandResult r = runner.run(List.of("seq", "1", "100000"));
        assertThat(r.succeeded()).isTrue();
        assertThat(r.stdout()).hasSize(1000).startsWith("1\n2\n");
    }

    @Test
    void aToolThatHangsIsStoppedAtTheTimeout() {
        ProcessCommandRunner quick = new ProcessCommandRunner(Duration.ofMillis(300), 1000);
        // sleep itself is the child (no shell in between), so stopping it by pid leaves nothing behind.
        CommandResult r = quick.run(List.of("sleep", "30"));
        assertThat(r.succeeded()).isFalse();
        assertThat(r.failure()).isEqualTo("sleep: no answer within 300 ms");
    }

    @Test
    void anInterruptCutsACommandShortUnlessItRunsToTheEnd() {
        List<String> command = List.of("sh", "-c", "sleep 0.3; echo done");
        Thread.currentThread().interrupt();
        CommandResult cut = runner.run(command);
        assertThat(Thread.interrupted()).isTrue();
        assertThat(cut.failure()).isEqualTo("sh: interrupted");

        Thread.currentThread().interrupt();
        CommandResult whole =
                ProcessCommandRunner.toTheEnd(Duration.ofSeconds(5)).run(command);
        assertThat(Thread.interrupted())
                .as("the interrupt is kept for the caller")
                .isTrue();
        assertThat(whole.succeeded()).isTrue();
        assertThat(whole.stdout()).isEqualTo("done\n");
    }

    @Test
    void aCommandRunToTheEndStillStopsAtItsLimit() {
        CommandResult r = ProcessCommandRunner.toTheEnd(Duration.ofSeconds(1)).run(List.of("sleep", "30"));
        assertThat(r.failure()).isEqualTo("sleep: no answer within 1 s");
    }
}
