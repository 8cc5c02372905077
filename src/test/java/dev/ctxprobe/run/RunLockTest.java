package dev.ctxprobe.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's lock as another process sees it. The locks are POSIX record locks, which a process loses on closing any
 * descriptor of the file: a lock that read its own file back through a second, closed channel was free for every
 * other ctxprobe from its first moment, and a second run of an experiment took the first one's live servers for
 * leftovers and stopped them.
 */
class RunLockTest {
    @TempDir
    Path dir;

    @Test
    void anotherProcessCannotTakeAHeldLockAndCanOnceItIsGone() throws Exception {
        Path file = dir.resolve("run.lock");
        try (RunLock held = RunLock.tryAcquire(file, "ctxprobe pid 1 in here")) {
            assertThat(held).isNotNull();
            // Not Files.readString here: in this process that would drop the lock (see above).
            assertThat(RunLock.holder(file)).isEqualTo("ctxprobe pid 1 in here");

            assertThat(otherProcessLocks(file))
                    .as("a lock held here is held for another process")
                    .isFalse();
        }
        assertThat(otherProcessLocks(file))
                .as("once released, the lock is free")
                .isTrue();
    }

    @Test
    void aRemovedLockLeavesNoFileAndIsFreeAgain() throws Exception {
        Path file = dir.resolve("run.lock");
        RunLock held = RunLock.tryAcquire(file, "first");
        held.closeAndRemove();

        assertThat(file).doesNotExist();
        try (RunLock again = RunLock.tryAcquire(file, "second")) {
            assertThat(again).isNotNull();
            assertThat(otherProcessLocks(file)).isFalse();
        }
    }

    /** Whether a separate JVM gets the lock of {@code file} (exit 0) or finds it held (exit 3). */
    private static boolean otherProcessLocks(Path file) throws Exception {
        Process p = new ProcessBuilder(
                        TestEngines.javaBin(), "-cp", TestEngines.classpath(), Probe.class.getName(), file.toString())
                .redirectErrorStream(true)
                .start();
        try {
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the probe ends").isTrue();
            assertThat(p.exitValue()).as(out).isIn(0, 3);
            return p.exitValue() == 0;
        } finally {
            p.destroyForcibly();
        }
    }

    /** Run in a child JVM: tries the lock of the file it is given, without waiting. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.WRITE);
                    FileLock lock = channel.tryLock()) {
                System.exit(lock == null ? 3 : 0);
            }
        }
    }
}
