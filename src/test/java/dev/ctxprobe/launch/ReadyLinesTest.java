package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.secrets.Redactor;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log copier tells its listener about each engine's ready line, read from a real child's output. The child
 * writes each piece only when the test says so, and the test says so only once the copier has handled the piece
 * before (it is back in its next read), so every read holds exactly one piece however busy the machine is.
 */
class ReadyLinesTest {
    private static final ReadyLines LINES =
            new ReadyLines(Engines.profile("vllm").readyLines());

    @TempDir
    Path dir;

    private Process child;

    @AfterEach
    void endChild() {
        if (child != null) {
            child.destroyForcibly();
        }
    }

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
    void theEndOfTheLastLineSeenIsWhereItsTextEnds() {
        byte[] two = bytes("INFO:     Application startup complete.\nINFO:     Uvicorn running on x\n");
        assertThat(LINES.endOfLast(two)).isEqualTo(two.length - " x\n".length());
        assertThat(LINES.endOfLast(bytes("INFO loading"))).isEqualTo(-1);
    }

    @Test
    void aReadyLineSplitAcrossTwoReadsIsSeenOnceAndOnlyWhileWatched() throws Exception {
        Path log = dir.resolve("server.log");
        LogCopier copier = new LogCopier(log, 1 << 20, Redactor.NONE, "t");
        copier.open();
        Semaphore seen = new Semaphore(0);
        copier.watchReadyLines(LINES, seen::release);
        // Each piece after the first waits for a line on the child's stdin.
        child = new ProcessBuilder(
                        "sh",
                        "-c",
                        "printf 'INFO loading\\nINFO:     Uvicorn run'; read go; printf 'ning on http://x\\n';"
                                + " read go; printf 'INFO next\\n'; read go;"
                                + " printf 'INFO:     Application startup complete.\\n'")
                .redirectErrorStream(true)
                .start();
        Reads reads = new Reads(child.getInputStream());
        copier.start(reads);

        reads.awaitHandled(1);
        assertThat(seen.availablePermits()).as("half a line is no line").isZero();

        next();
        reads.awaitHandled(2);
        assertThat(seen.availablePermits())
                .as("the line completed by the second read")
                .isEqualTo(1);

        next();
        reads.awaitHandled(3);
        assertThat(seen.availablePermits())
                .as("the line seen is not carried into the next read")
                .isEqualTo(1);

        copier.stopWatching();
        next();
        assertThat(reads.closed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seen.availablePermits())
                .as("a ready line after the watch ended")
                .isEqualTo(1);
        assertThat(Files.readString(log))
                .isEqualTo("INFO loading\nINFO:     Uvicorn running on http://x\nINFO next\n"
                        + "INFO:     Application startup complete.\n");
    }

    private void next() throws IOException {
        OutputStream stdin = child.getOutputStream();
        stdin.write('\n');
        stdin.flush();
    }

    /**
     * The child's output as the copier reads it, telling the test how far the copier got: a read begun after {@code
     * n} reads that brought bytes means those n pieces are handled (scanned and copied), and the copier closes its
     * input only once the log file is complete and closed.
     */
    private static final class Reads extends FilterInputStream {
        private final Semaphore begun = new Semaphore(0);
        /** Written by the copier's thread before the read that releases {@link #begun}; read after acquiring it. */
        private int brought;

        /** The test's own: reads begun that it has waited for. */
        private int taken;

        final CountDownLatch closed = new CountDownLatch(1);

        Reads(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            begun.release();
            int n = super.read(b, off, len);
            if (n > 0) {
                brought++;
            }
            return n;
        }

        /** Waits until the copier has begun the read after its {@code n}th piece. */
        void awaitHandled(int n) throws InterruptedException {
            // The first read begins before any piece: n pieces handled is n + 1 reads begun.
            assertThat(begun.tryAcquire(n + 1 - taken, 10, TimeUnit.SECONDS))
                    .as("the copier's read after piece " + n)
                    .isTrue();
            taken = n + 1;
            assertThat(brought).as("one piece per read").isEqualTo(n);
        }

        @Override
        public void close() throws IOException {
            super.close();
            closed.countDown();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
