package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What the engine's own count showed while a concurrency probe's requests were in flight (docs/results.md,
 * "engine_count"): evidence beside the client's timing, which stays the step's outcome.
 *
 * @param source the endpoint read, e.g. {@code /metrics} or {@code /slots}
 * @param reads how many times it was read and understood during the probe
 * @param maxRunning the most requests it showed running at one read (llama.cpp: slots processing)
 * @param maxWaiting the most it showed queued at one read; null where the engine shows no queue
 * @param preemptions the engine's preemptions counted from the first read to the last; null where it counts none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record EngineCount(String source, int reads, int maxRunning, Integer maxWaiting, Long preemptions) {}
