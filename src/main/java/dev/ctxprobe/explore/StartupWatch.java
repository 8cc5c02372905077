package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.FatalLines;
import dev.ctxprobe.launch.ProcessGroups;
import dev.ctxprobe.launch.ServerHandle;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Watches a starting server beside its readiness wait, for the two verdicts that need no timeout
 * (docs/failures.md, "Verdicts before the timeout"): a fatal line its profile names, followed by
 * {@code timeouts.fatal_grace_s} without readiness; and a stall, a log that stays silent while the server's process
 * group uses no CPU for {@code timeouts.stall_s}. On a verdict it stops the server, which ends the readiness wait;
 * the step then takes the verdict instead of what the wait saw. A server that exits by itself meanwhile is judged
 * as today, by its exit and its log.
 */
final class StartupWatch {
    /** How often the log and the process table are read: a verdict comes at most this late. */
    static final Duration POLL = Duration.ofMillis(250);

    /**
     * CPU in a second (in clock ticks of 10 ms) above which the server counts as working: an idle process still
     * spends a tick now and then on its timers and its garbage collector.
     */
    private static final long BUSY_TICKS_PER_SECOND = 2;

    private static final int MAX_READ = 1 << 20;

    /**
     * A verdict reached while the server still ran.
     *
     * @param fatal true for a fatal line, false for a stall
     * @param line the fatal line, or the last line the log had (null for an empty log)
     * @param afterCause from the cause (the fatal line seen, the start of the silence) to the verdict
     * @param silent how long the log had been silent
     */
    record Verdict(boolean fatal, String line, Duration afterCause, Duration silent) {}

    private final ServerHandle handle;
    private final Path log;
    private final FatalLines fatalLines;
    private final long graceNanos;
    private final long stallNanos;
    private final Thread thread;
    private final Object lock = new Object();
    private boolean closed;
    private Verdict verdict;

    private long offset;
    private final StringBuilder partial = new StringBuilder();
    private String lastLine;
    private String cause;
    private long causeAt;

    private StartupWatch(ServerHandle handle, EngineProfile profile, Duration grace, Duration stall) {
        this.handle = handle;
        this.log = handle.log();
        this.fatalLines = new FatalLines(profile);
        this.graceNanos = grace.toNanos();
        this.stallNanos = handle.pid() == null ? 0 : stall.toNanos();
        this.thread = Thread.ofVirtual().name("startup-watch").unstarted(this::watch);
    }

    /** Starts watching {@code handle}; nothing is watched for a server whose log ctxprobe does not hold. */
    static StartupWatch start(ServerHandle handle, EngineProfile profile, Duration grace, Duration stall) {
        StartupWatch w = new StartupWatch(handle, profile, grace, stall);
        if (w.log != null) {
            w.thread.start();
        }
        return w;
    }

    /**
     * Stops watching once the readiness wait has returned; the verdict, if one was reached (the server is then
     * stopped, or being stopped by the watch: {@link ServerHandle#stop()} waits for that stop).
     */
    Optional<Verdict> close() {
        synchronized (lock) {
            closed = true;
            // A watch that reached a verdict is stopping the server: an interrupt would cut its TERM wait short.
            if (verdict == null) {
                thread.interrupt();
            }
        }
        WatchThreads.awaitEnd(thread);
        synchronized (lock) {
            return Optional.ofNullable(verdict);
        }
    }

    private void watch() {
        long now = System.nanoTime();
        long lastChange = now;
        long lastBusy = now;
        long ticks = stallNanos > 0 ? ProcessGroups.cpuTicks(handle.pid()) : -1;
        long ticksAt = now;
        try {
            while (handle.isAlive()) {
                now = System.nanoTime();
                if (read()) {
                    lastChange = now;
                }
                Verdict v = null;
                if (cause != null && now - causeAt >= graceNanos) {
                    v = new Verdict(true, cause, Duration.ofNanos(now - causeAt), Duration.ofNanos(now - lastChange));
                } else if (ticks >= 0 && now - ticksAt >= Duration.ofSeconds(1).toNanos()) {
                    long t = ProcessGroups.cpuTicks(handle.pid());
                    if (t < 0) {
                        ticks = -1;
                    } else {
                        double seconds = (now - ticksAt) / 1e9;
                        if (t - ticks > BUSY_TICKS_PER_SECOND * seconds) {
                            lastBusy = now;
                        }
                        ticks = t;
                        ticksAt = now;
                        long quietSince = Math.max(lastChange, lastBusy);
                        if (now - quietSince >= stallNanos) {
                            v = new Verdict(
                                    false,
                                    lastLine,
                                    Duration.ofNanos(now - quietSince),
                                    Duration.ofNanos(now - lastChange));
                        }
                    }
                }
                if (v != null) {
                    synchronized (lock) {
                        if (closed) {
                            return;
                        }
                        verdict = v;
                    }
                    handle.stop();
                    return;
                }
                Thread.sleep(POLL.toMillis());
            }
        } catch (InterruptedException e) {
            // close(): the readiness wait has returned.
        }
    }

    /** Reads what the log gained; true when it grew. */
    private boolean read() {
        byte[] bytes;
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long size = f.length();
            if (size < offset) {
                // The log was rewritten (its size cap keeps the head and the latest tail): read on from its end.
                offset = size;
                partial.setLength(0);
                return true;
            }
            if (size == offset) {
                return false;
            }
            int n = (int) Math.min(MAX_READ, size - offset);
            bytes = new byte[n];
            f.seek(offset);
            f.readFully(bytes);
            offset += n;
        } catch (IOException notYet) {
            return false;
        }
        partial.append(new String(bytes, StandardCharsets.UTF_8));
        int start = 0;
        for (int i = 0; i < partial.length(); i++) {
            if (partial.charAt(i) == '\n') {
                line(partial.substring(start, i));
                start = i + 1;
            }
        }
        partial.delete(0, start);
        return true;
    }

    private void line(String line) {
        if (!line.isBlank()) {
            lastLine = line.strip();
        }
        if (cause == null) {
            Optional<String> fatal = fatalLines.next(line);
            if (fatal.isPresent()) {
                cause = fatal.get();
                causeAt = System.nanoTime();
            }
        }
    }
}
