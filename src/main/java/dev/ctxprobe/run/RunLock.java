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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Marks something as in use while a run goes on: a run folder (so that another ctxprobe neither resumes it nor
 * takes its live servers for the leftovers of a killed run), an experiment folder (one run of an experiment at a
 * time), a fixed port (one run serving on it at a time). The operating system drops the lock when the process dies,
 * SIGKILL included, so what a killed run held is free again at once. The file names its holder, for messages.
 */
final class RunLock implements AutoCloseable {
    static final String NAME = "run.lock";

    /** The files this process holds, with their holder lines: reading one here would drop its lock (tryAcquire). */
    private static final Map<Path, String> HELD_HERE = new ConcurrentHashMap<>();

    private final FileChannel channel;
    private final FileLock lock;
    private final Path file;
    /** The file as its name gave it after the lock was taken; open as long as the lock is held (see tryAcquire). */
    private FileChannel byName;
    /** The line the file holds while this lock is held; null until it is known to be the file's. */
    private String holder;

    private RunLock(FileChannel channel, FileLock lock, Path file) {
        this.channel = channel;
        this.lock = lock;
        this.file = file;
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
        // A holder removes its file when it ends (closeAndRemove): a lock taken on a file opened just before that
        // removal locks a name no longer there. What the name holds after the write tells: another try opens the
        // file the name has now.
        for (int attempt = 0; ; attempt++) {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            RunLock held;
            try {
                FileLock lock = channel.tryLock();
                if (lock == null) {
                    channel.close();
                    return null;
                }
                channel.truncate(0);
                channel.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)), 0);
                held = new RunLock(channel, lock, file);
            } catch (OverlappingFileLockException heldHere) {
                channel.close();
                return null;
            }
            // The name is read through a channel kept open until the lock goes: the locks are POSIX record locks,
            // and closing any descriptor of the file would drop every lock this process holds on it.
            if (held.namedBy(holder + "\n")) {
                held.holder = holder;
                HELD_HERE.put(file, holder);
                return held;
            }
            held.close();
            if (attempt == 2) {
                return null;
            }
        }
    }

    private boolean namedBy(String text) {
        byte[] expected = text.getBytes(StandardCharsets.UTF_8);
        try {
            byName = FileChannel.open(file, StandardOpenOption.READ);
            ByteBuffer read = ByteBuffer.allocate(expected.length + 1);
            int n;
            do {
                n = byName.read(read, read.position());
            } while (n > 0 && read.hasRemaining());
            return read.flip().equals(ByteBuffer.wrap(expected));
        } catch (IOException removed) {
            return false;
        }
    }

    /** Who holds the lock in {@code file}, as it says, or "another ctxprobe" when it cannot be read. */
    static String holder(Path file) {
        String here = HELD_HERE.get(file);
        if (here != null) {
            return here;
        }
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            return text.isEmpty() ? "another ctxprobe" : text;
        } catch (IOException e) {
            return "another ctxprobe";
        }
    }

    /** Removes the file, then releases the lock: a run that ended leaves no lock file in its folder. */
    void closeAndRemove() throws IOException {
        try {
            Files.deleteIfExists(file);
        } finally {
            close();
        }
    }

    @Override
    public void close() throws IOException {
        if (holder != null) {
            HELD_HERE.remove(file, holder);
        }
        try {
            lock.release();
        } finally {
            try {
                channel.close();
            } finally {
                if (byName != null) {
                    byName.close();
                }
            }
        }
    }
}
