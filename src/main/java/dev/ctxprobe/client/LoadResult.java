package dev.ctxprobe.client;

import java.util.List;

/**
 * The records of one step's requests.
 *
 * @param warmup the warm-up requests, in order
 * @param measured the measured requests, by index
 * @param windowStartNanos {@link System#nanoTime()} just before the first measured request was started
 * @param windowEndNanos {@link System#nanoTime()} once the last measured request had ended
 */
public record LoadResult(
        List<RequestRecord> warmup, List<RequestRecord> measured, long windowStartNanos, long windowEndNanos) {

    public LoadResult {
        warmup = List.copyOf(warmup);
        measured = List.copyOf(measured);
    }
}
