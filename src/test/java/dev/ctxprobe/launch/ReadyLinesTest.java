package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.secrets.Redactor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log copier tells its listener about each engine's ready line, read from a real child's output. */
class ReadyLinesTest {
    private static final ReadyLines LINES =
            new ReadyLines(Engines.profile("vllm").readyLines());

    @TempDir
    Path dir;

    @Test
    void eachEnginesReadyLineIsKnown() {
        assertThat(LINES.in(bytes("main: server is listening on http://127.0.0.1:8080 - starting the main loop")))
                .isTrue();
        assertThat(LINES.in(bytes("INFO:     Application startup complete."))).isTrue();
        assertThat(LINES.in(bytes("INFO:     Uvicorn running on http://0.0.0.0:23333 (Press CTRL+C to quit)")))
                .isTrue();
        assertThat(LINES.in(bytes("[2025-01-01] The server is fired up and ready to roll!")))
                .isTrue();
        assertThat(LINES.in(bytes("INFO Loading weights took 12.3 s"))).isFalse();
    }

    @Test
    void aReadyLineSplitAcrossTwoWritesIsSeenAndOnlyWhileWatched() throws Exception {
        Path log = dir.resolve("server.log");
        LogCopier copier = new LogCopier(log, 1 << 20, Redactor.NONE, "t");
        copier.open();
        Semaphore seen = new Semaphore(0);
        copier.watchReadyLines(LINES, seen::release);
        // Two writes 300 ms apart arrive as two reads of the pipe.
        Process p = new ProcessBuilder(
                        "sh",
                        "-c",
                        "printf 'INFO loading\\nINFO:     Uvicorn run'; sleep 0.3; printf 'ning on http://x\\n';"
                                + " sleep 0.3; printf 'stopped watching\\n'")
                .redirectErrorStream(true)
                .start();
        copier.start(p.getInputStream());
        assertThat(seen.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
        copier.stopWatching();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        copier.settle(Duration.ofSeconds(5));
        assertThat(Files.readString(log)).endsWith("Uvicorn running on http://x\nstopped watching\n");
        assertThat(seen.availablePermits()).isZero();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
