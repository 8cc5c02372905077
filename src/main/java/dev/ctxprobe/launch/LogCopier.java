package dev.ctxprobe.launch;

import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Copies a server's output into its log file, with secret values masked and the size capped: past the cap only the
 * head (on disk) and the tail (kept in memory, written after a marker line) are kept, so a server that logs a
 * gigabyte costs {@code cap} bytes of disk and at most 8 MiB of memory. Capacity lines come early and the cause of an
 * exit comes last, which is what {@link ServerLog} reads. The copy always drains the pipe, even when the disk is
 * full: a server whose output is not read would block on its next write.
 */
final class LogCopier {
    private static final int CHUNK = 64 * 1024;
    private static final long MAX_TAIL = 8L << 20;
    private static final long MIN_TAIL = 64L << 10;
    private static final long TAIL_WRITE_EVERY_NANOS = Duration.ofSeconds(1).toNanos();

    /** A read that has waited this long with everything before it written means the output is caught up. */
    private static final long IDLE_NANOS = Duration.ofMillis(15).toNanos();

    private InputStream in;
    private final Path file;
    private final Redactor redactor;
    private final long cap;
    private final long headCap;
    private final int ringBytes;
    /** The tail's ring, made when the head is full: most logs never get there, and it is up to 8 MiB. */
    private byte[] ring;

    private final Thread thread;

    private RandomAccessFile out;
    private long written;
    private long overflow;
    private int ringStart;
    private int ringSize;
    private long lastTailWrite;
    private boolean tailDirty;
    private final byte[] pending = new byte[CHUNK];
    private int pendingSize;
    private final byte[] buffer = new byte[CHUNK];
    private int bufferSize;

    private volatile boolean finished;
    private volatile long readingSince;

    /** What is looked for, and who is told, while someone waits for a ready line; null when nobody does. */
    private volatile Watch watch;

    /** The end of the previous chunk, so that a ready line split across two reads is still seen. */
    private final byte[] carry = new byte[ReadyLines.MAX_BYTES - 1];

    private int carrySize;

    /**
     * @param cap the most bytes the log file holds, marker included
     */
    LogCopier(Path file, long cap, Redactor redactor, String name) {
        this.file = file;
        this.redactor = redactor;
        this.cap = cap;
        long tail = Math.max(MIN_TAIL, Math.min(cap / 8, MAX_TAIL));
        this.headCap = Math.max(0, cap - tail);
        this.ringBytes = (int) Math.min(tail, cap);
        this.thread = Thread.ofPlatform().daemon().name("ctxprobe-log-" + name).unstarted(this::copy);
    }

    /** Creates (or empties) the log file, before the server starts, so that a file that cannot be written stops it. */
    void open() throws IOException {
        out = new RandomAccessFile(file.toFile(), "rw");
        out.setLength(0);
    }

    /** Copies {@code output} (the server's stdout and stderr) until it ends. */
    void start(InputStream output) {
        this.in = output;
        thread.start();
    }

    private record Watch(ReadyLines lines, Runnable listener) {}

    /**
     * Calls {@code listener} (from the copying thread) each time a read of the output completes one of {@code lines}
     * (a line split across reads included, never the same line twice), until {@link #stopWatching()}; the output is
     * only scanned while someone listens.
     */
    void watchReadyLines(ReadyLines lines, Runnable listener) {
        watch = lines.texts().isEmpty() ? null : new Watch(lines, listener);
    }

    void stopWatching() {
        watch = null;
    }

    /**
     * Waits until what the server has written so far is in the file: the output ended, or the copier has waited
     * for more with nothing left to write; at most {@code limit}. Call before reading the log to judge a step.
     */
    void settle(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!finished) {
            long since = readingSince;
            long now = System.nanoTime();
            if (since != 0 && now - since >= IDLE_NANOS) {
                synchronized (this) {
                    if (tailDirty) {
                        writeTail();
                    }
                }
                return;
            }
            if (now > deadline) {
                return;
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Waits, at most {@code limit}, until the server's output has ended and all of it is in the file; for a server
     * that has exited. Its last lines (the cause of an exit) may still be in the pipe when the exit is seen, and a
     * reader that is merely idle for a moment says nothing about that on a loaded machine: the end of the output is
     * the only signal that cannot come early. A child that outlives the server and keeps the pipe open ends the wait
     * at the limit, with what has been read so far in the file.
     */
    void drain(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!finished && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!finished) {
            synchronized (this) {
                emitPending();
                flush();
                if (tailDirty) {
                    writeTail();
                }
            }
        }
    }

    private void copy() {
        byte[] chunk = new byte[CHUNK];
        try {
            while (true) {
                int n;
                readingSince = System.nanoTime();
                try {
                    n = in.read(chunk);
                } catch (IOException closed) {
                    n = -1;
                }
                readingSince = 0;
                if (n < 0) {
                    break;
                }
                Watch watching = watch;
                if (watching != null && sawReadyLine(watching.lines(), chunk, n)) {
                    watching.listener().run();
                }
                synchronized (this) {
                    take(chunk, n);
                    if (available() == 0) {
                        // Nothing more right now: a line still open is written as it is, so the file shows what
                        // the server said even when it writes no newline for a while.
                        emitPending();
                        flush();
                    }
                    if (tailDirty && System.nanoTime() - lastTailWrite > TAIL_WRITE_EVERY_NANOS) {
                        writeTail();
                    }
                }
            }
            synchronized (this) {
                emitPending();
                flush();
                if (ringSize > 0) {
                    writeTail();
                }
            }
        } finally {
            synchronized (this) {
                close();
            }
            finished = true;
        }
    }

    private boolean sawReadyLine(ReadyLines lines, byte[] chunk, int n) {
        byte[] window = new byte[carrySize + n];
        System.arraycopy(carry, 0, window, 0, carrySize);
        System.arraycopy(chunk, 0, window, carrySize, n);
        int end = lines.endOfLast(window);
        // Only what follows a line seen is carried: kept whole, the next read would report the same line again.
        int keep = Math.min(lines.longest() - 1, window.length - Math.max(end, 0));
        System.arraycopy(window, window.length - keep, carry, 0, keep);
        carrySize = keep;
        return end >= 0;
    }

    private int available() {
        try {
            return in.available();
        } catch (IOException e) {
            return 0;
        }
    }

    // Lines are masked whole, so a secret is never split by a read boundary inside a line.
    private void take(byte[] chunk, int n) {
        if (redactor.isEmpty()) {
            emit(chunk, 0, n);
            return;
        }
        int from = 0;
        for (int i = 0; i < n; i++) {
            if (chunk[i] == '\n') {
                appendPending(chunk, from, i + 1);
                emitPending();
                from = i + 1;
            }
        }
        appendPending(chunk, from, n);
    }

    private void appendPending(byte[] b, int from, int to) {
        while (from < to) {
            int k = Math.min(to - from, pending.length - pendingSize);
            System.arraycopy(b, from, pending, pendingSize, k);
            pendingSize += k;
            from += k;
            if (pendingSize == pending.length) {
                // A line longer than a chunk is masked in pieces.
                emitPending();
            }
        }
    }

    private void emitPending() {
        if (pendingSize == 0) {
            return;
        }
        byte[] masked = redactor.mask(pending, 0, pendingSize);
        if (masked == null) {
            emit(pending, 0, pendingSize);
        } else {
            emit(masked, 0, masked.length);
        }
        pendingSize = 0;
    }

    private void emit(byte[] b, int from, int len) {
        int off = from;
        int left = len;
        if (written < headCap) {
            int k = (int) Math.min(left, headCap - written);
            buffered(b, off, k);
            written += k;
            off += k;
            left -= k;
        }
        if (left > 0) {
            flush();
            toRing(b, off, left);
        }
    }

    private void buffered(byte[] b, int off, int len) {
        while (len > 0) {
            int k = Math.min(len, buffer.length - bufferSize);
            System.arraycopy(b, off, buffer, bufferSize, k);
            bufferSize += k;
            off += k;
            len -= k;
            if (bufferSize == buffer.length) {
                flush();
            }
        }
    }

    // The newest ring.length bytes, oldest first from ringStart; what falls out is counted as left out.
    private void toRing(byte[] b, int off, int len) {
        if (ring == null) {
            ring = new byte[ringBytes];
        }
        int size = ring.length;
        if (len >= size) {
            overflow += ringSize + len - size;
            System.arraycopy(b, off + len - size, ring, 0, size);
            ringStart = 0;
            ringSize = size;
        } else {
            int end = (ringStart + ringSize) % size;
            int first = Math.min(len, size - end);
            System.arraycopy(b, off, ring, end, first);
            System.arraycopy(b, off + first, ring, 0, len - first);
            int dropped = Math.max(0, ringSize + len - size);
            overflow += dropped;
            ringStart = (ringStart + dropped) % size;
            ringSize = Math.min(size, ringSize + len);
        }
        tailDirty = true;
    }

    private void flush() {
        if (bufferSize == 0 || out == null) {
            bufferSize = 0;
            return;
        }
        try {
            out.write(buffer, 0, bufferSize);
        } catch (IOException full) {
            // A full disk loses the rest of the log, never the server: keep draining, write nothing more.
            closeQuietly();
        }
        bufferSize = 0;
    }

    // The file after the head: a marker naming what was left out, then the tail from its first whole line.
    private void writeTail() {
        lastTailWrite = System.nanoTime();
        tailDirty = false;
        if (out == null) {
            return;
        }
        byte[] tail = new byte[ringSize];
        for (int i = 0; i < ringSize; i++) {
            tail[i] = ring[(ringStart + i) % ring.length];
        }
        int from = 0;
        if (overflow > 0) {
            for (int i = 0; i < tail.length; i++) {
                if (tail[i] == '\n') {
                    from = i + 1;
                    break;
                }
            }
        }
        long leftOut = overflow + from;
        try {
            out.seek(written);
            if (leftOut > 0) {
                String marker = String.format(
                        Locale.ROOT,
                        "\n[... ctxprobe left out %,d bytes of this log here; it keeps %,d bytes at most"
                                + " (limits.server_log_mib) ...]\n",
                        leftOut,
                        cap);
                out.write(marker.getBytes(StandardCharsets.UTF_8));
            }
            out.write(tail, from, tail.length - from);
            out.setLength(out.getFilePointer());
        } catch (IOException full) {
            closeQuietly();
        }
    }

    private void close() {
        closeQuietly();
        try {
            in.close();
        } catch (IOException ignored) {
            // The pipe is gone with the server.
        }
    }

    private void closeQuietly() {
        if (out == null) {
            return;
        }
        try {
            out.close();
        } catch (IOException ignored) {
            // Nothing more can be written to it anyway.
        }
        out = null;
    }
}
