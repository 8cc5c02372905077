package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
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

    /**
     * The CPU time the live processes of group or session {@code pgid} have used, user and system, in clock ticks
     * (fields 14 and 15 of /proc/PID/stat); -1 where the process table cannot be read, so that a caller can tell
     * "idle" from "unknown" (docs/failures.md, "A stall is a verdict").
     */
    public static long cpuTicks(long pgid) {
        long ticks = 0;
        try (DirectoryStream<Path> dirs =
                Files.newDirectoryStream(PROC, p -> isNumber(p.getFileName().toString()))) {
            for (Path dir : dirs) {
                String[] f = liveStatFields(dir.resolve("stat"), 13);
                if (f != null && isNumber(f[2]) && isNumber(f[3])) {
                    long group = Long.parseLong(f[2]);
                    long session = Long.parseLong(f[3]);
                    if ((group == pgid || session == pgid) && isNumber(f[11]) && isNumber(f[12])) {
                        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return -1;
        }
        return ticks;
    }

    /**
     * A live (non-zombie) process as the process table shows it.
     *
     * @param startTicks its start time in clock ticks since boot
     */
    public record Proc(long pid, long pgid, long sid, long startTicks) {}

    /**
     * The live processes of one launch: those in process group or session {@code pgid}, and those that carry the
     * environment entry {@code mark} (inherited by every descendant, whatever it did to its group or session), in
     * both cases started no earlier than {@code sinceTicks}. This process is never among them.
     *
     * @param mark {@code NAME=value} as it appears in {@code /proc/PID/environ}, or null to look by group only
     */
    public static List<Proc> launchMembers(long pgid, String mark, long sinceTicks) {
        byte[] entry = mark == null ? null : (mark + "\0").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        List<Proc> found = new ArrayList<>();
        try (DirectoryStream<Path> dirs =
                Files.newDirectoryStream(PROC, p -> isNumber(p.getFileName().toString()))) {
            for (Path dir : dirs) {
                long pid = Long.parseLong(dir.getFileName().toString());
                Proc p = proc(pid, dir.resolve("stat"));
                if (p == null || pid == self || p.startTicks() < sinceTicks) {
                    continue;
                }
                if (p.pgid() == pgid || p.sid() == pgid || (entry != null && carries(dir.resolve("environ"), entry))) {
                    found.add(p);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the process table /proc: " + e.getMessage(), e);
        }
        return found;
    }

    // Entries are NUL-terminated; the mark is found at the start or right after a NUL. A process of another user, or
    // one that exited meanwhile, cannot be read and is not ours.
    private static boolean carries(Path environ, byte[] entry) {
        byte[] env;
        try {
            env = Files.readAllBytes(environ);
        } catch (IOException | SecurityException unreadable) {
            return false;
        }
        outer:
        for (int i = 0; i + entry.length <= env.length; i++) {
            if (i > 0 && env[i - 1] != 0) {
                continue;
            }
            for (int j = 0; j < entry.length; j++) {
                if (env[i + j] != entry[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * Sends SIGTERM (or SIGKILL when {@code force}) to one process, if it is still the process seen: the JDK checks
     * its start time, so a pid reused meanwhile is left alone.
     */
    public static void signalProcess(long pid, boolean force) {
        ProcessHandle.of(pid).ifPresent(h -> {
            if (force) {
                h.destroyForcibly();
            } else {
                h.destroy();
            }
        });
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

    private static Proc proc(long pid, Path stat) {
        String[] f = liveStatFields(stat, 20);
        return f == null ? null : new Proc(pid, Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[19]));
    }

    // Fields 5 and 6 of /proc/PID/stat, counted after the command name, which may hold spaces and parentheses.
    private static long[] groupAndSession(Path stat) {
        String[] f = liveStatFields(stat, 4);
        return f == null ? null : new long[] {Long.parseLong(f[2]), Long.parseLong(f[3])};
    }

    /**
     * The fields of /proc/PID/stat from the state on (field 3), split after the command name's last parenthesis
     * since the name may hold spaces and parentheses; null when the file is gone, shorter than {@code least}
     * fields, or the process is a zombie or dead.
     */
    private static String[] liveStatFields(Path stat, int least) {
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
        return f.length < least || f[0].equals("Z") || f[0].equals("X") ? null : f;
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.chars().allMatch(Character::isDigit);
    }
}
