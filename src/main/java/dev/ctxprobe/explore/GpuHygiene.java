package dev.ctxprobe.explore;

import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.hardware.ComputeProcesses;
import dev.ctxprobe.hardware.Device;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.hardware.MemorySnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Accelerator memory around each launch (spec 04): a server that left memory behind makes the next launch fail
 * with a misleading OOM, so before a launch the memory must be back at the run's baseline, waiting up to the
 * shutdown time, else the step fails as {@code gpu_busy} naming the holders. Without an accelerator query (a CPU
 * machine) every check passes and nothing is recorded.
 */
final class GpuHygiene {
    /** Memory a device may hold above its baseline and still count as free (driver noise, other small users). */
    static final long TOLERANCE_MIB = 1024;

    private static final Duration POLL = Duration.ofMillis(500);

    private final HardwareProbe probe;
    private final Duration wait;
    private final List<Long> baseline;

    GpuHygiene(HardwareProbe probe, Duration wait) {
        this.probe = probe;
        this.wait = wait;
        this.baseline = usedMiB();
    }

    /** Memory used per device now, or null when it cannot be read. */
    List<Long> usedMiB() {
        MemorySnapshot s = probe.memoryUsed();
        if (!s.available() || s.devices().isEmpty()) {
            return null;
        }
        List<Long> used = new ArrayList<>();
        for (Device d : s.devices()) {
            used.add(d.memUsedMiB() == null ? 0L : d.memUsedMiB());
        }
        return used;
    }

    /** Null when the accelerators are back at their baseline (after waiting if needed), else a gpu_busy failure. */
    StepFailure preflight() throws InterruptedException {
        if (baseline == null) {
            return null;
        }
        long deadline = System.nanoTime() + wait.toNanos();
        List<Long> now = usedMiB();
        while (now != null && !atBaseline(now)) {
            if (System.nanoTime() > deadline) {
                ComputeProcesses holders = probe.computeProcesses();
                List<String> evidence = new ArrayList<>();
                evidence.add("memory used per device (MiB): " + now + ", at the run's start: " + baseline);
                evidence.add(
                        holders.available()
                                ? "processes holding accelerator memory: " + holders.pids()
                                : "processes holding memory unknown: " + holders.unavailableReason());
                return StepFailure.of(
                        FailureClass.GPU_BUSY,
                        Phase.PREFLIGHT,
                        "accelerator memory is still held " + wait.toSeconds() + " s after the last stop"
                                + (holders.available() && !holders.pids().isEmpty() ? " by pids " + holders.pids() : "")
                                + "; stop those processes before launching",
                        evidence);
            }
            Thread.sleep(POLL.toMillis());
            now = usedMiB();
        }
        return null;
    }

    private boolean atBaseline(List<Long> now) {
        if (now.size() != baseline.size()) {
            return false;
        }
        for (int i = 0; i < now.size(); i++) {
            if (now.get(i) > baseline.get(i) + TOLERANCE_MIB) {
                return false;
            }
        }
        return true;
    }
}
