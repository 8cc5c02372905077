package dev.ctxprobe.launch;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Process groups from the process table (/proc): engines re-parent workers to init (SGLang) or leave them
 * running after the API server dies (vLLM), so a group is found by its id, not by walking children.
 */
public final class ProcessGroups {
    private static final Path PROC = Path.of("/proc");

    private ProcessGroups() {}

    /** Live (non-zombie) processes whose process group or session is {@code pgid}. */
    public static List<Long> members(long pgid) {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> dirs =
                Files.newDirectoryStream(PROC, p -> isNumber(p.getFileName().toString()))) {
            for (Path dir : dirs) {
                long[] ids = groupAndSession(dir.resolve("stat"));
                if (ids != null && (ids[0] == pgid || ids[1] == pgid)) {
                    pids.add(Long.parseLong(dir.getFileName().toString()));
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the process table /proc: " + e.getMessage(), e);
        }
        return pids;
    }

    /** The process group id of a live process, or -1 when it is gone. */
    public static long groupOf(long pid) {
        long[] ids = groupAndSession(PROC.resolve(Long.toString(pid)).resolve("stat"));
        return ids == null ? -1 : ids[0];
    }

    /** The start time of a live process in clock ticks since boot (field 22 of its stat), or -1 when it is gone. */
    public static long startTicks(long pid) {
        String s;
        try {
            s = Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"));
        } catch (IOException gone) {
            return -1;
        }
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return f.length > 19 ? Long.parseLong(f[19]) : -1;
    }

    /** The kernel's id of this boot: pids and start times are only comparable within one boot. */
    public static String bootId() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** Sends a signal (TERM, KILL) to every process of a group. */
    public static void signal(long pgid, String signal) {
        if (pgid <= 1) {
            throw new IllegalArgumentException("refusing to signal process group " + pgid);
        }
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal, "--", "-" + pgid)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            kill.waitFor();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run kill to stop process group " + pgid + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until no process of the group is left; true when none is, false when {@code limit} ran out. */
    public static boolean awaitGone(long pgid, java.time.Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!members(pgid).isEmpty()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                // A second Ctrl-C must not leave the group behind: the caller goes on to KILL; keep the interrupt.
                Thread.currentThread().interrupt();
                return members(pgid).isEmpty();
            }
        }
        return true;
    }

    // Fields 5 and 6 of /proc/PID/stat, counted after the command name, which may hold spaces and parentheses.
    private static long[] groupAndSession(Path stat) {
        String s;
        try {
            s = Files.readString(stat);
        } catch (IOException e) {
            return null;
        }
        int close = s.lastIndexOf(')');
        if (close < 0) {
            return null;
        }
        String[] f = s.substring(close + 2).split(" ");
        if (f.length < 4 || f[0].equals("Z") || f[0].equals("X")) {
            return null;
        }
        return new long[] {Long.parseLong(f[2]), Long.parseLong(f[3])};
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.chars().allMatch(Character::isDigit);
    }
}
