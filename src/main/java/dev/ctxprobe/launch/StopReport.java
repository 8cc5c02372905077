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
 * @param outsideGroupPids its processes found outside its process group (a worker that called setpgid, a daemon
 *     that called setsid), each stopped by pid; empty for launchers that cannot tell
 */
public record StopReport(
        boolean stoppedCleanly,
        List<Long> leftoverPids,
        Termination ended,
        Duration took,
        List<Long> memoryAfterMib,
        List<Long> outsideGroupPids) {
    /** The stop of a server ctxprobe did not start: nothing was stopped, nothing is known of how it ended. */
    public static final StopReport NOTHING = new StopReport(true, List.of(), null, Duration.ZERO, null);

    /** True for {@link #NOTHING}: the step's server facts stay as they were. */
    public boolean nothingStopped() {
        return this == NOTHING;
    }

    public StopReport {
        leftoverPids = List.copyOf(leftoverPids);
        outsideGroupPids = List.copyOf(outsideGroupPids);
    }

    /** A stop of a launcher that sees no processes outside what it started. */
    public StopReport(
            boolean stoppedCleanly,
            List<Long> leftoverPids,
            Termination ended,
            Duration took,
            List<Long> memoryAfterMib) {
        this(stoppedCleanly, leftoverPids, ended, took, memoryAfterMib, List.of());
    }
}
