package dev.ctxprobe.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How many processes of ctxprobe's cgroup the kernel's OOM killer has killed: {@code oom_kill} in cgroup v2's
 * {@code memory.events} (hierarchical: a server in a child cgroup counts) or cgroup v1's {@code memory.oom_control}.
 * Read when a server starts and when it is found killed by SIGKILL, it tells the OOM killer from an operator's
 * {@code kill -9}, which nothing in the server's log can.
 */
final class OomKills {
    private static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");

    private OomKills() {}

    /** The count now, or null where no counter can be read. */
    static Long count() {
        return count(Path.of("/proc/self/cgroup"), CGROUP_ROOT);
    }

    static Long count(Path selfCgroup, Path root) {
        List<String> lines;
        try {
            lines = Files.readAllLines(selfCgroup);
        } catch (IOException | SecurityException e) {
            return null;
        }
        for (String line : lines) {
            String[] parts = line.split(":", 3);
            if (parts.length < 3) {
                continue;
            }
            Long found = null;
            if (parts[0].equals("0") && parts[1].isEmpty()) {
                found = first(root.resolve(relative(parts[2])).resolve("memory.events"), root.resolve("memory.events"));
            } else if (List.of(parts[1].split(",")).contains("memory")) {
                Path v1 = root.resolve("memory");
                // Inside a container the mount's root is the process's own cgroup, not the path /proc names.
                found = first(
                        v1.resolve(relative(parts[2])).resolve("memory.oom_control"), v1.resolve("memory.oom_control"));
            }
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    private static String relative(String path) {
        return path.startsWith("/") ? path.substring(1) : path;
    }

    private static Long first(Path... files) {
        for (Path file : files) {
            Long n = oomKill(file);
            if (n != null) {
                return n;
            }
        }
        return null;
    }

    private static Long oomKill(Path file) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("oom_kill ")) {
                    return Long.parseLong(line.substring("oom_kill ".length()).strip());
                }
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            return null;
        }
        return null;
    }

    /**
     * What a SIGKILL was, from the counts at the start and now: the OOM killer's when the count grew, an outside
     * kill's when it did not, null when either count is unknown.
     */
    static String sigkillCause(Long atStart, Long now) {
        if (atStart == null || now == null) {
            return null;
        }
        return now > atStart
                ? "the kernel's OOM killer (oom_kill " + atStart + " -> " + now + " in this cgroup)"
                : "killed from outside: not the OOM killer of this cgroup (oom_kill unchanged at " + now
                        + "), so an operator or another program";
    }
}
