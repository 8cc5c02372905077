package dev.ctxprobe.run;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Marks something as in use while a run goes on: a run folder (so that another ctxprobe neither resumes it nor
 * takes its live servers for the leftovers of a killed run), an experiment folder (one run of an experiment at a
 * time), a fixed port (one run serving on it at a time). The operating system drops the lock when the process dies,
 * SIGKILL included, so what a killed run held is free again at once. The file names its holder, for messages.
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
        return tryAcquire(
                runDir.resolve(NAME), "ctxprobe pid " + ProcessHandle.current().pid() + " in " + runDir);
    }

    /**
     * The lock held in {@code file}, which then says {@code holder}; null when another process holds it.
     *
     * @param holder one line naming who holds it, e.g. {@code ctxprobe pid 123 in results/demo/20260708-143534}
     */
    static RunLock tryAcquire(Path file, String holder) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return null;
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            return new RunLock(channel, lock);
        } catch (OverlappingFileLockException heldHere) {
            channel.close();
            return null;
        }
    }

    /** Who holds the lock in {@code file}, as it says, or "another ctxprobe" when it cannot be read. */
    static String holder(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            return text.isEmpty() ? "another ctxprobe" : text;
        } catch (IOException e) {
            return "another ctxprobe";
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
