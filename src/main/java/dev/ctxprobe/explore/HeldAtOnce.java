package dev.ctxprobe.explore;

import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.ServedCapacity;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether the N requests of a concurrency probe, all served, were held by the server at once
 * (docs/search.md#held-at-once), judged by the client from the times of their tokens alone: there was a moment
 * when all N were being generated together, when the last first token arrived before the first request finished;
 * and no request paused in its decode for about a prefill after that moment while the others went on, which is how a request that lost
 * its KV cells to the others (preempted, then computed again) looks from outside.
 */
final class HeldAtOnce {
    /**
     * A pause of at least this share of the quickest TTFT, about a prefill done again. The TTFT holds the upload and
     * a cold server's start too, so a preemption on a server's first requests may pass unseen; the search's next
     * probe, one align above, shows it again.
     */
    static final double PREFILL_SHARE = 0.5;
    /** ... and at least this many times the usual gap between tokens: a slow decode step is no preemption. */
    static final double GAP_FACTOR = 4;
    /** ... and at least this long: shorter pauses are a loaded machine's noise, whatever the prompts' size. */
    static final double FLOOR_MS = 20;
    /** ... while the others got at least this many tokens: they went on without it. */
    static final int OTHERS_TOKENS = 2;

    private HeldAtOnce() {}

    /**
     * The {@code not_concurrent} failure of served requests that were not held at once, or empty when they were.
     *
     * @param measured the probe's requests, every one served with its length verified
     * @param stated what the server stated about its limits; its slots (SGLang: its max_running_requests) name the
     *     cause "more requests than slots"
     * @param preempts whether the engine may preempt at all: for one that never does (llama.cpp), a pause in a
     *     decode is another slot's prompt batch, and only queueing is looked for
     */
    static Optional<StepFailure> judge(List<RequestRecord> measured, ServedCapacity stated, boolean preempts) {
        int n = measured.size();
        if (n < 2 || measured.stream().anyMatch(r -> r.tFirstNanos() == null || r.tLastNanos() == null)) {
            return Optional.empty();
        }
        RequestRecord lastFirst = measured.stream()
                .max(Comparator.comparingLong(RequestRecord::tFirstNanos))
                .orElseThrow();
        RequestRecord firstDone = measured.stream()
                .min(Comparator.comparingLong(RequestRecord::tLastNanos))
                .orElseThrow();
        Integer slots = stated == null ? null : stated.slots();
        Integer running = stated == null ? null : stated.maxRunningRequests();
        String slotCause = slots != null && slots < n
                ? String.format(Locale.ROOT, ": more requests than slots (%d sent, the server has %d)", n, slots)
                : running != null && running < n
                        ? String.format(
                                Locale.ROOT,
                                ": more requests than max_running_requests (%d sent, the server runs %d)",
                                n,
                                running)
                        : "";
        if (lastFirst.tFirstNanos() > firstDone.tLastNanos()) {
            int queued = (int) measured.stream()
                    .filter(r -> r.tFirstNanos() > firstDone.tLastNanos())
                    .count();
            return Optional.of(StepFailure.of(
                    FailureClass.NOT_CONCURRENT,
                    Phase.MEASURE,
                    String.format(
                                    Locale.ROOT,
                                    "all %d requests were served, but not held at once: queued (%d of them got their"
                                            + " first token only after request %d had finished)",
                                    n,
                                    queued,
                                    firstDone.index())
                            + slotCause,
                    evidence(measured)));
        }
        if (!slotCause.isEmpty()) {
            // The server's own count is proof: its slots cannot run more requests together, however close their
            // tokens came (a busy server's HTTP thread delivers them in bursts).
            return Optional.of(StepFailure.of(
                    FailureClass.NOT_CONCURRENT,
                    Phase.MEASURE,
                    "all " + n + " requests were served, but not held at once" + slotCause
                            + "; their tokens' times alone did not show it",
                    evidence(measured)));
        }
        if (!preempts) {
            return Optional.empty();
        }
        long held = lastFirst.tFirstNanos();
        double quickestTtft = measured.stream()
                .mapToDouble(r -> (r.tFirstNanos() - r.tBeginNanos()) / 1e6)
                .min()
                .orElse(0);
        double usualGap = median(measured.stream()
                .flatMap(r -> r.itlMs().stream())
                .mapToDouble(Double::doubleValue)
                .toArray());
        for (RequestRecord r : measured) {
            double at = (r.tFirstNanos() - held) / 1e6;
            for (double gap : r.itlMs()) {
                // A pause that lasts past the moment all had begun: the first to begin is the first to lose its
                // cells, right after its first token.
                if (at + gap > 0
                        && gap >= Math.max(FLOOR_MS, Math.max(PREFILL_SHARE * quickestTtft, GAP_FACTOR * usualGap))
                        && othersGenerated(measured, r, held, at, at + gap)) {
                    return Optional.of(StepFailure.of(
                            FailureClass.NOT_CONCURRENT,
                            Phase.MEASURE,
                            String.format(
                                            Locale.ROOT,
                                            "all %d requests were served, but not held at once: preempted (request %d"
                                                    + " paused %.0f ms in its decode while the others went on, about"
                                                    + " a prefill: the quickest TTFT was %.0f ms)",
                                            n,
                                            r.index(),
                                            gap,
                                            quickestTtft)
                                    + slotCause,
                            evidence(measured)));
                }
                at += gap;
            }
        }
        return Optional.empty();
    }

    /**
     * Whether other requests got at least {@link #OTHERS_TOKENS} tokens while {@code paused} waited, between {@code
     * fromMs} and {@code toMs} after {@code held}: a request preempted waits while the others go on; a pause of all
     * of them at once is the machine's or a batch's, not a preemption.
     */
    private static boolean othersGenerated(
            List<RequestRecord> measured, RequestRecord paused, long held, double fromMs, double toMs) {
        int tokens = 0;
        for (RequestRecord other : measured) {
            if (other == paused) {
                continue;
            }
            double at = (other.tFirstNanos() - held) / 1e6;
            for (double gap : other.itlMs()) {
                at += gap;
                if (at > fromMs && at < toMs) {
                    tokens++;
                }
            }
        }
        return tokens >= OTHERS_TOKENS;
    }

    /** Each request's first token and finish, relative to the first send, for the failure's evidence. */
    private static List<String> evidence(List<RequestRecord> measured) {
        long t0 = measured.stream().mapToLong(RequestRecord::tBeginNanos).min().orElse(0);
        List<String> lines = new ArrayList<>();
        for (RequestRecord r : measured) {
            lines.add(String.format(
                    Locale.ROOT,
                    "request %d: first token at %.0f ms, finished at %.0f ms, longest pause %.0f ms",
                    r.index(),
                    (r.tFirstNanos() - t0) / 1e6,
                    (r.tLastNanos() - t0) / 1e6,
                    r.itlMs().stream().mapToDouble(Double::doubleValue).max().orElse(0)));
        }
        return lines;
    }

    private static double median(double[] values) {
        if (values.length == 0) {
            return 0;
        }
        java.util.Arrays.sort(values);
        return values[values.length / 2];
    }
}
