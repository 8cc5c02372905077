package dev.ctxprobe.launch;

import dev.ctxprobe.hardware.ComputeProcesses;
import dev.ctxprobe.hardware.Device;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.hardware.MemorySnapshot;
import dev.ctxprobe.results.FailureClass;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Accelerator memory around each launch (docs/failures.md, {@code gpu_busy}): a server that left memory behind makes the next launch fail
 * with a misleading OOM, so before a launch the memory must be back at the run's baseline, waiting up to the
 * shutdown time, else the step fails as {@code gpu_busy} naming the holders. Without an accelerator query (a CPU
 * machine) every check passes and nothing is recorded.
 */
final class GpuHygiene {
    /** Memory a device may hold above its baseline and still count as free (driver noise, other small users). */
    static final long TOLERANCE_MIB = 1024;

    private static final Duration POLL = Duration.ofMillis(500);

    private final HardwareProbe probe;
    private final Map<Integer, Long> baseline;

    GpuHygiene(HardwareProbe probe) {
        this.probe = probe;
        this.baseline = used();
    }

    /** True when the machine's accelerators could be read at the run's start: a CPU machine has none to share. */
    boolean watchesAccelerators() {
        return baseline != null;
    }

    /** Memory used per device now in device order, or null when it cannot be read. */
    List<Long> usedMiB() {
        Map<Integer, Long> now = used();
        return now == null ? null : List.copyOf(now.values());
    }

    private Map<Integer, Long> used() {
        MemorySnapshot s = probe.memoryUsed();
        if (!s.available() || s.devices().isEmpty()) {
            return null;
        }
        Map<Integer, Long> used = new TreeMap<>();
        for (Device d : s.devices()) {
            used.put(d.index(), d.memUsedMiB() == null ? 0L : d.memUsedMiB());
        }
        return used;
    }

    /**
     * Empty when the backend's accelerators are back at their baseline (after waiting if needed), else a gpu_busy
     * refusal.
     *
     * @param env the backend's environment: its {@code *_VISIBLE_DEVICES} says which devices it uses, so that
     *     another user's job on another device does not fail this step
     * @param wait how long memory may take to come back (the shutdown time)
     */
    Optional<Refusal> preflight(Map<String, String> env, Duration wait) throws InterruptedException {
        if (baseline == null) {
            return Optional.empty();
        }
        Set<Integer> devices = visibleDevices(env);
        long deadline = System.nanoTime() + wait.toNanos();
        Map<Integer, Long> now = used();
        while (now != null && !atBaseline(now, devices)) {
            if (System.nanoTime() > deadline) {
                ComputeProcesses holders = probe.computeProcesses();
                List<String> evidence = new ArrayList<>();
                evidence.add("memory used per device (MiB): " + now + ", at the run's start: " + baseline);
                evidence.add(
                        holders.available()
                                ? "processes holding accelerator memory: " + holders.pids()
                                : "processes holding memory unknown: " + holders.unavailableReason());
                return Optional.of(new Refusal(
                        FailureClass.GPU_BUSY,
                        "accelerator memory is still held " + wait.toSeconds() + " s after the last stop"
                                + (holders.available() && !holders.pids().isEmpty() ? " by pids " + holders.pids() : "")
                                + "; stop those processes before launching",
                        evidence));
            }
            Thread.sleep(POLL.toMillis());
            now = used();
        }
        return Optional.empty();
    }

    /** The device indices a backend's environment makes visible, or null for all of them. */
    static Set<Integer> visibleDevices(Map<String, String> env) {
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey().endsWith("_VISIBLE_DEVICES") && e.getValue().strip().matches("\\d+(\\s*,\\s*\\d+)*")) {
                Set<Integer> devices = new TreeSet<>();
                for (String d : e.getValue().split(",")) {
                    devices.add(Integer.parseInt(d.strip()));
                }
                return devices;
            }
        }
        return null;
    }

    /** True when two environments make no device visible to both (an environment naming none sees them all). */
    static boolean disjoint(Map<String, String> env, Map<String, String> otherEnv) {
        Set<Integer> a = visibleDevices(env);
        Set<Integer> b = visibleDevices(otherEnv);
        return a != null && b != null && a.stream().noneMatch(b::contains);
    }

    private boolean atBaseline(Map<Integer, Long> now, Set<Integer> devices) {
        for (Map.Entry<Integer, Long> d : now.entrySet()) {
            if (devices != null && !devices.contains(d.getKey())) {
                continue;
            }
            long before = baseline.getOrDefault(d.getKey(), 0L);
            if (d.getValue() > before + TOLERANCE_MIB) {
                return false;
            }
        }
        return true;
    }
}
