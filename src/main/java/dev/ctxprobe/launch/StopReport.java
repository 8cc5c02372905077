package dev.ctxprobe.launch;

import java.time.Duration;
import java.util.List;

/**
 * How a server's stop went.
 *
 * @param stoppedCleanly every process of it left on TERM, without KILL
 * @param leftoverPids its processes still alive after KILL (should be none)
 * @param ended how it ended, or null when that cannot be told
 * @param memoryAfterMib accelerator memory used per device after the stop, or null when it cannot be read
 */
public record StopReport(
        boolean stoppedCleanly, List<Long> leftoverPids, Termination ended, Duration took, List<Long> memoryAfterMib) {
    public StopReport {
        leftoverPids = List.copyOf(leftoverPids);
    }
}
