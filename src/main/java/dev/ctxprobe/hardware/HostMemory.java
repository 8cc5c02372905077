package dev.ctxprobe.hardware;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The memory a process on this machine may use: the kernel's {@code MemTotal}, or the cgroup's {@code memory.max}
 * when that is lower (a container, a Slurm job). A CPU build of an engine keeps its KV cache there.
 */
public final class HostMemory {
    private static final Path MEMINFO = Path.of("/proc/meminfo");
    private static final Path CGROUP_MAX = Path.of("/sys/fs/cgroup/memory.max");

    private HostMemory() {}

    /** In bytes, with where it came from; null where neither can be read (not Linux). */
    public static Reading read() {
        return read(MEMINFO, CGROUP_MAX);
    }

    /** The same from the given files, for a test. */
    static Reading read(Path meminfo, Path cgroupMax) {
        Long total = memTotal(meminfo);
        Long limit = cgroupLimit(cgroupMax);
        if (limit != null && (total == null || limit < total)) {
            return new Reading(limit, cgroupMax + " (the cgroup's limit)");
        }
        return total == null ? null : new Reading(total, meminfo + " MemTotal");
    }

    /** @param source the file the figure was read from, for the plan's inputs */
    public record Reading(long bytes, String source) {}

    private static Long memTotal(Path meminfo) {
        try {
            for (String line : Files.readAllLines(meminfo)) {
                if (line.startsWith("MemTotal:")) {
                    String kib = line.substring("MemTotal:".length())
                            .replace("kB", "")
                            .strip();
                    return Long.parseLong(kib) * 1024;
                }
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            return null;
        }
        return null;
    }

    private static Long cgroupLimit(Path file) {
        try {
            String text = Files.readString(file).strip();
            return text.equals("max") ? null : Long.parseLong(text);
        } catch (IOException | NumberFormatException | SecurityException e) {
            return null;
        }
    }
}
