package dev.ctxprobe.explore;

import dev.ctxprobe.results.EngineCount;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether the engine's own count of a concurrency probe's requests agrees with the client's timing
 * (docs/search.md#held-at-once). The timing stays the outcome; a disagreement is a warning in words.
 *
 * <p>The timing says held at once, but the engine never showed all N running, or preempted some: the count is read
 * every {@link ProgressWatch#COUNT_POLL}, so a moment of all N shorter than that may pass unread, and the warning says
 * how many reads it made. Requests seen waiting while all N were seen running at another read are no disagreement:
 * an engine queues each arrival until its next scheduler step, and limits the prefill it batches at once.
 *
 * <p>The timing says not held, but the engine showed all N running at one read and no preemption.
 */
final class EngineCounts {
    private EngineCounts() {}

    /**
     * The warning where the engine's count and the timing disagree, else empty.
     *
     * @param count what the engine counted during the probe
     * @param n the requests sent at once
     * @param heldByTiming the timing's verdict: held at once
     */
    static Optional<String> disagreement(EngineCount count, int n, boolean heldByTiming) {
        long preempted = count.preemptions() == null ? 0 : count.preemptions();
        String saw = "the engine's " + count.source();
        if (heldByTiming) {
            if (count.maxRunning() < n) {
                String queued = count.maxWaiting() != null && count.maxWaiting() > 0
                        ? String.format(Locale.ROOT, " and up to %d waiting", count.maxWaiting())
                        : "";
                return Optional.of(String.format(
                        Locale.ROOT,
                        "%s saw at most %d of %d running at once%s in %d reads; the timing says all %d were held at"
                                + " once",
                        saw,
                        count.maxRunning(),
                        n,
                        queued,
                        count.reads(),
                        n));
            }
            if (preempted > 0) {
                return Optional.of(String.format(
                        Locale.ROOT,
                        "%s counted %d preemption%s during the probe; the timing says all %d were held at once",
                        saw,
                        preempted,
                        preempted == 1 ? "" : "s",
                        n));
            }
            return Optional.empty();
        }
        if (count.maxRunning() >= n && preempted == 0) {
            return Optional.of(String.format(
                    Locale.ROOT,
                    "%s saw all %d running at once%s; the timing says they were not held at once",
                    saw,
                    n,
                    count.preemptions() == null ? "" : " and no preemption"));
        }
        return Optional.empty();
    }
}
