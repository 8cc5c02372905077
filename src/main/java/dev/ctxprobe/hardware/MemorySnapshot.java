package dev.ctxprobe.hardware;

import java.util.List;

/**
 * Accelerator memory in use per device at one moment, for GPU hygiene before launch and after stop.
 *
 * @param unavailableReason null when the devices were read; else why not (then {@code devices} is empty)
 */
public record MemorySnapshot(String source, List<Device> devices, String unavailableReason) {

    public MemorySnapshot {
        devices = List.copyOf(devices);
    }

    /** True when the memory could be read. */
    public boolean available() {
        return unavailableReason == null;
    }
}
