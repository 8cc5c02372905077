package dev.ctxprobe.report;

/** A step's aggregate metrics as the seeds name them; any value the file lacks is null. */
public record StepMetrics(
        Long successCount,
        Long totalCount,
        Double durationS,
        Double requestThroughput,
        Double inputTokenThroughput,
        Double outputTokenThroughput,
        Long totalInputTokens,
        Long totalOutputTokens,
        Stats e2eMs,
        Stats ttftMs,
        Stats tpotMs,
        Stats itlMs) {}
