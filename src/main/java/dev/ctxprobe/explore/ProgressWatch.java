package dev.ctxprobe.explore;

import dev.ctxprobe.engine.Progress;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.results.EngineCount;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

/**
 * Watches the progress a live server shows on the step's requests while the client waits for them
 * (docs/failures.md, "Verdicts before the timeout"): where the engine's profile names a progress endpoint, a server
 * that holds requests and shows no change there for {@code timeouts.progress_s} while it is alive makes no
 * progress. The watch then stops the server, which ends the requests at once, and the step takes the verdict
 * instead of what the requests saw. A server that shows progress is never cut short: its requests run to {@code
 * request_s}.
 *
 * <p>For a concurrency probe it also keeps the engine's own count (docs/search.md#held-at-once): the most requests
 * running and waiting at one read and the preemptions from the first read to the last, read more often so that a
 * short moment of all N running is seen; this it does for any server, started by ctxprobe or not.
 */
final class ProgressWatch {
    /** How often the endpoint is asked. */
    static final Duration POLL = Duration.ofMillis(500);
    /** How often it is asked while a probe's requests are counted: a moment of all N running lasts about a decode. */
    static final Duration COUNT_POLL = Duration.ofMillis(100);

    /**
     * A server that held requests and showed no progress.
     *
     * @param afterCause from its last change (the cause: the moment its progress stopped) to the verdict
     * @param shown what the endpoint last showed
     */
    record Verdict(String path, Duration afterCause, String shown) {}

    private final ServerHandle handle;
    private final Progress progress;
    private final Function<String, String> get;
    private final long limitNanos;
    private final boolean judges;
    private final boolean counts;
    private final Thread thread;
    private final Object lock = new Object();
    private boolean closed;
    private Verdict verdict;
    private int reads;
    private int maxRunning;
    private Integer maxWaiting;
    private Long firstPreemptions;
    private Long lastPreemptions;

    private ProgressWatch(
            ServerHandle handle, Progress progress, Function<String, String> get, Duration limit, boolean count) {
        this.handle = handle;
        this.progress = progress;
        this.get = get;
        this.limitNanos = limit.toNanos();
        this.judges = progress != null && !limit.isZero() && handle.id() != null;
        this.counts = progress != null && count;
        this.thread = Thread.ofVirtual().name("progress-watch").unstarted(this::watch);
    }

    /**
     * Starts watching; no verdict is reached where the engine shows no progress, the limit is zero, or the server is
     * not one ctxprobe started (it could not be stopped to end the requests).
     *
     * @param count whether to keep the engine's own count of the requests (a concurrency probe)
     */
    static ProgressWatch start(
            ServerHandle handle, Progress progress, Function<String, String> get, Duration limit, boolean count) {
        ProgressWatch w = new ProgressWatch(handle, progress, get, limit, count);
        if (w.judges || w.counts) {
            w.thread.start();
        }
        return w;
    }

    /**
     * What the engine counted while the requests were in flight, read once more after they returned so that the
     * preemptions are all counted; empty when not counting or the endpoint showed no count. Call after {@link
     * #close()}.
     */
    Optional<EngineCount> counted() {
        if (!counts) {
            return Optional.empty();
        }
        String body = get.apply(progress.path());
        synchronized (lock) {
            if (body != null) {
                progress.read().apply(body).ifPresent(this::count);
            }
            if (reads == 0) {
                return Optional.empty();
            }
            return Optional.of(new EngineCount(
                    progress.path(),
                    reads,
                    maxRunning,
                    maxWaiting,
                    firstPreemptions == null ? null : lastPreemptions - firstPreemptions));
        }
    }

    private void count(Progress.Sample s) {
        Progress.Counts c = s.counts();
        if (c == null) {
            return;
        }
        reads++;
        maxRunning = Math.max(maxRunning, c.running());
        if (c.waiting() != null) {
            maxWaiting = maxWaiting == null ? c.waiting() : Math.max(maxWaiting, c.waiting());
        }
        if (c.preemptions() != null) {
            firstPreemptions = firstPreemptions == null ? c.preemptions() : firstPreemptions;
            lastPreemptions = c.preemptions();
        }
    }

    /** Stops watching once the requests have returned; the verdict, if one was reached (the server is stopped). */
    Optional<Verdict> close() {
        synchronized (lock) {
            closed = true;
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
        String signature = null;
        long since = System.nanoTime();
        try {
            while (handle.isAlive()) {
                String body = get.apply(progress.path());
                if (Thread.currentThread().isInterrupted()) {
                    return;
                }
                long now = System.nanoTime();
                Optional<Progress.Sample> s =
                        body == null ? Optional.empty() : progress.read().apply(body);
                if (counts && s.isPresent()) {
                    synchronized (lock) {
                        count(s.get());
                    }
                }
                if (!judges) {
                    // Counting only: no verdict for a server ctxprobe could not stop, or with no limit.
                    Thread.sleep(COUNT_POLL.toMillis());
                    continue;
                }
                if (s.isEmpty() || !s.get().busy() || !s.get().signature().equals(signature)) {
                    // Idle (between requests, or not yet received), unreadable, or moving: the clock starts again.
                    signature = s.map(Progress.Sample::signature).orElse(null);
                    since = now;
                } else if (now - since >= limitNanos) {
                    synchronized (lock) {
                        if (closed) {
                            return;
                        }
                        verdict = new Verdict(
                                progress.path(),
                                Duration.ofNanos(now - since),
                                s.get().shown());
                    }
                    handle.stop();
                    return;
                }
                Thread.sleep((counts ? COUNT_POLL : POLL).toMillis());
            }
        } catch (InterruptedException e) {
            // close(): the requests have returned.
        }
    }
}
