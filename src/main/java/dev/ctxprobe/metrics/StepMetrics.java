package dev.ctxprobe.metrics;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.ctxprobe.client.RequestRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The seeds' per-step {@code metrics} object, computed from the measured requests as
 * docs/results.md (Metrics) defines it. Component names map to the seed keys under snake_case.
 */
@JsonPropertyOrder({
    "successCount",
    "totalCount",
    "durationS",
    "requestThroughput",
    "inputTokenThroughput",
    "outputTokenThroughput",
    "totalInputTokens",
    "totalOutputTokens",
    "e2eMs",
    "ttftMs",
    "tpotMs",
    "itlMs"
})
public record StepMetrics(
        int successCount,
        int totalCount,
        double durationS,
        double requestThroughput,
        double inputTokenThroughput,
        double outputTokenThroughput,
        long totalInputTokens,
        long totalOutputTokens,
        Stats e2eMs,
        Stats ttftMs,
        Stats tpotMs,
        Stats itlMs) {

    /** A request counts as successful when {@link RequestRecord#ok()} and its prompt length is exact. */
    public static Optional<StepMetrics> from(List<RequestRecord> measured) {
        return from(measured, r -> r.ok() && r.exactLength());
    }

    /**
     * The aggregates over {@code measured}, or empty when no request succeeded (the seeds write
     * {@code metrics: null} then).
     *
     * @param succeeded which requests count as successful (lenient verification drops the length check)
     */
    public static Optional<StepMetrics> from(List<RequestRecord> measured, Predicate<RequestRecord> succeeded) {
        List<RequestRecord> ok = measured.stream().filter(succeeded).toList();
        if (ok.isEmpty()) {
            return Optional.empty();
        }
        long begin =
                measured.stream().mapToLong(RequestRecord::tBeginNanos).min().orElseThrow();
        long end = measured.stream().mapToLong(RequestRecord::tEndNanos).max().orElseThrow();
        double durationS = (end - begin) / 1e9;
        long inputTokens = 0;
        long outputTokens = 0;
        List<Double> e2e = new ArrayList<>();
        List<Double> ttft = new ArrayList<>();
        List<Double> tpot = new ArrayList<>();
        List<Double> itl = new ArrayList<>();
        for (RequestRecord r : ok) {
            inputTokens += r.promptTokens() != null ? r.promptTokens() : 0;
            outputTokens += r.completionTokens() != null ? r.completionTokens() : 0;
            e2e.add(r.e2eMs());
            ttft.add(r.ttftMs());
            if (r.tpotMs() != null) {
                tpot.add(r.tpotMs());
            }
            itl.addAll(r.itlMs());
        }
        return Optional.of(new StepMetrics(
                ok.size(),
                measured.size(),
                durationS,
                ok.size() / durationS,
                inputTokens / durationS,
                outputTokens / durationS,
                inputTokens,
                outputTokens,
                Stats.of(e2e),
                Stats.of(ttft),
                Stats.of(tpot),
                Stats.of(itl)));
    }
}
