package dev.ctxprobe.report;

/**
 * One stats object of a step's metrics, in milliseconds: the seeds' five keys and ctxprobe's added
 * {@code count, std, min, max} (null where the file does not have them).
 */
public record Stats(
        Double mean, Double p50, Double p90, Double p95, Double p99, Long count, Double std, Double min, Double max) {}
