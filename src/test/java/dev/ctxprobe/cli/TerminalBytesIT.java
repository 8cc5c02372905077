package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, failure 3: ESC, OSC, BEL and NUL from a server's body, SSE event and log reached the terminal raw
 * (screen cleared, window title changed). Under a real terminal, the console now holds no byte below 0x20 but line
 * ends and its own sequences; the server's bytes show as visible escapes.
 */
class TerminalBytesIT {
    /** What the console itself draws with: a carriage return, erase to the end of the line, up N lines and erase. */
    private static final String OWN_SEQUENCES = "\r|\u001B\\[K|\u001B\\[\\d+F\u001B\\[J";

    @TempDir
    Path dir;

    private PtyRuns.Terminal terminal;

    @AfterEach
    void endWhatIsLeft() {
        if (terminal != null && terminal.process().isAlive()) {
            terminal.process().destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    @Test
    void aServersControlBytesNeverReachTheTerminal() throws Exception {
        PtyRuns.assumePython();
        // The engine keeps loading until the live line has drawn its log line: on a loaded machine a fixed pause
        // could pass between two redraws.
        Path hold = Files.writeString(dir.resolve("hold"), "");
        // The startup limit outlasts the wait below: the hold, not the limit, ends the loading (CI once ran out of
        // the fault tests' 5 s before the live line had drawn the log line).
        Path exp = FaultRuns.write(
                dir,
                "bytes",
                List.of(1000L, 2000L),
                0,
                "{startup_s: 90, request_s: 10, shutdown_s: 3}",
                "",
                List.of(new Backend("engine", null, "--fault control-bytes --hold-while " + hold)));
        Path out = dir.resolve("out");
        terminal = PtyRuns.start(dir, Map.of(), "run", exp.toString(), "--out", out.toString(), "--verbose");
        await().atMost(Duration.ofSeconds(60))
                .ignoreExceptions()
                .until(() -> new String(terminal.bytes(), StandardCharsets.UTF_8).contains("pwned-title"));
        Files.delete(hold);

        assertThat(terminal.outcome(120)).isEqualTo("exit 0");
        String console = new String(terminal.bytes(), StandardCharsets.UTF_8);
        String withoutOwn = console.replaceAll(OWN_SEQUENCES, "");
        List<String> found = new ArrayList<>();
        withoutOwn.chars().filter(c -> c < 0x20 && c != '\n').forEach(c -> found.add(String.format("0x%02x", c)));
        assertThat(found).as(console).isEmpty();
        assertThat(console)
                .as("the event's and the body's bytes are shown as escapes")
                .contains("event said \\u001b]0;pwned-title\\u0007\\u0000")
                .contains("upstream failed \\u001b]0;pwned-title")
                .as("so are the log line's in the live line")
                .contains("Loading \\u001b]0;pwned-title");
        assertThat(Files.readString(dir.resolve("terminal.err"))).isEmpty();
    }
}
