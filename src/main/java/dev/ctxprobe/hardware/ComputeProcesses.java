package dev.ctxprobe.hardware;

import java.util.List;

/**
 * The processes that hold accelerator memory.
 *
 * @param unavailableReason null when the list could be read; else why not (then {@code pids} is empty)
 */
public record ComputeProcesses(List<Long> pids, String unavailableReason) {

    public ComputeProcesses {
        pids = List.copyOf(pids);
    }

    /** True when the list could be read. */
    public boolean available() {
        return unavailableReason == null;
    }
}
