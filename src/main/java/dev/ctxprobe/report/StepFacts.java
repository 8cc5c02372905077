package dev.ctxprobe.report;

import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import java.util.OptionalDouble;
import java.util.stream.Collectors;

/**
 * What the report formats show of a step beyond its raw keys, worked out once: the rates with what they divide,
 * the cause in words, the upload time, and the step table text and Markdown share.
 */
public final class StepFacts {
    /** The step table's columns as text and Markdown show them, each rate named by what it divides. */
    static final List<String> HEADERS = List.of(
            "backend",
            "target",
            "max_model_len",
            "outcome",
            "TTFT ms",
            "e2e ms",
            "prefill tok/s (target / TTFT)",
            "input tok/s (input tokens / duration)",
            "error / cause");

    /** Which columns hold numbers (right-aligned). */
    static final List<Boolean> NUMERIC = List.of(false, true, true, false, true, true, true, true, false);

    private StepFacts() {}

    static List<String> cells(Scenario s) {
        StepMetrics m = s.metrics();
        return List.of(
                Cells.oneLine(s.backend()),
                Cells.tokens(s.targetLen()),
                Cells.tokens(s.maxModelLen()),
                Cells.oneLine(s.outcome().id()),
                m == null ? "" : Cells.oneDecimal(m.ttftMs().mean()),
                m == null ? "" : Cells.oneDecimal(m.e2eMs().mean()),
                Cells.whole(prefillRate(s)),
                m == null ? "" : Cells.whole(m.inputTokenThroughput()),
                Cells.oneLine(causeText(s)));
    }

    /**
     * Prefill tokens per second: the target over the mean TTFT. The seeds' {@code input_token_throughput} divides
     * by the whole duration instead, which in the P800 seed holds seconds of something else (18,557 tok/s at 64K
     * where the prompt's prefill ran at 167,737).
     */
    public static Double prefillRate(Scenario s) {
        return s.metrics() == null
                ? null
                : rate(s.targetLen(), s.metrics().ttftMs().mean());
    }

    /** Tokens over milliseconds as tokens per second; null when the time is not a positive number. */
    static Double rate(long tokens, double ms) {
        return ms > 0 && Double.isFinite(ms) ? tokens / (ms / 1000) : null;
    }

    /** The mean TTFT of a step that passed, or null: a failed step's numbers do not belong on its curve. */
    static Double passedTtftMs(Scenario s) {
        if (!s.success() || s.metrics() == null) {
            return null;
        }
        double mean = s.metrics().ttftMs().mean();
        return Double.isFinite(mean) ? mean : null;
    }

    /** Why a step failed in words: the outcome column already names the class, so the sentence alone. */
    static String causeText(Scenario s) {
        if (s.success()) {
            return Cells.text(s.error());
        }
        if (s.error() != null && !s.error().isEmpty()) {
            return s.error();
        }
        if (s.failure() != null && s.failure().detail() != null) {
            return s.failure().detail();
        }
        return s.outcome().id();
    }

    /** The mean time the measured requests took to upload their prompt, or null where none was timed. */
    static Double sendMsMean(Scenario s) {
        OptionalDouble mean = s.requests().stream()
                .filter(r -> !r.warmup() && r.sendMs() != null)
                .mapToDouble(Scenario.Request::sendMs)
                .average();
        return mean.isPresent() ? mean.getAsDouble() : null;
    }

    /** How the step's server ended, in words; null when unknown. */
    static String ended(Scenario s) {
        return s.server() == null || s.server().ended() == null
                ? null
                : s.server().ended().describe();
    }

    /** Accelerator memory per device, e.g. {@code 1,200 / 0 MiB}; null when not queried. */
    static String memory(List<Long> mib) {
        if (mib == null || mib.isEmpty()) {
            return null;
        }
        return mib.stream().map(Cells::tokens).collect(Collectors.joining(" / ")) + " MiB";
    }
}
