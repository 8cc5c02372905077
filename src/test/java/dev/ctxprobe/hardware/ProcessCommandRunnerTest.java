package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProcessCommandRunnerTest {

    private final ProcessCommandRunner runner = new ProcessCommandRunner(Duration.ofSeconds(5), 1000);

    @Test
    void absentToolIsReportedAsNotInstalled() {
        CommandResult r = runner.run(List.of("ctxprobe-no-such-tool-xyz", "--version"));
        assertThat(r.absent()).isTrue();
        assertThat(r.failure()).isEqualTo("ctxprobe-no-such-tool-xyz: not installed (not on PATH)");
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
}
