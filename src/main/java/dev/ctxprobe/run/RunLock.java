package dev.ctxprobe.run;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Marks a run folder as in use while a run goes on, so that another ctxprobe neither resumes it nor takes its
 * live servers for the leftovers of a killed run. The operating system drops the lock when the process dies,
 * SIGKILL included, so a killed run's folder is free again at once.
 */
final class RunLock implements AutoCloseable {
    static final String NAME = "run.lock";

    private final FileChannel channel;
    private final FileLock lock;

    private RunLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** The lock of {@code runDir}, or null when another run holds it. */
    static RunLock tryAcquire(Path runDir) throws IOException {
        FileChannel channel =
                FileChannel.open(runDir.resolve(NAME), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return null;
            }
            return new RunLock(channel, lock);
        } catch (OverlappingFileLockException heldHere) {
            channel.close();
            return null;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
