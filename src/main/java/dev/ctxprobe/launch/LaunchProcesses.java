package dev.ctxprobe.launch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every process of one local launch, wherever it went. The server leads its own process group and session, but a
 * worker may call {@code setpgid} (a group of its own) or daemonize with {@code setsid} and a double fork (a session
 * of its own, re-parented to init): neither the group nor the parent links find those. Each launch is therefore
 * marked with an environment variable, {@value #MARK_VARIABLE}, whose value is unique to the launch; every
 * descendant inherits it, and {@code /proc/PID/environ} shows it whatever the process did to its group or session.
 *
 * <p>Why an environment mark and not a cgroup: a cgroup also holds processes that clear their environment, but
 * creating one needs a writable, delegated cgroup tree (root, or a systemd user slice with delegation), which a
 * user on a shared GPU machine, in a container, or inside a Slurm job (where slurmd owns the cgroup) rarely has. The
 * mark needs no privilege and works on every Linux. A process that replaces its whole environment ({@code env -i})
 * escapes it; engines do not do that to their workers.
 */
final class LaunchProcesses {
    /** The environment variable that marks every process of a launch. */
    static final String MARK_VARIABLE = "CTXPROBE_LAUNCH";

    private static final Duration POLL = Duration.ofMillis(20);

    private final long pgid;
    private final long startTicks;
    private final String mark;

    /**
     * @param pgid the leader's pid, which is its group and session id
     * @param startTicks the leader's start time; nothing started earlier is the launch's
     * @param markValue the launch's value of {@value #MARK_VARIABLE}, or null for a launch recorded without one
     */
    LaunchProcesses(long pgid, long startTicks, String markValue) {
        this.pgid = pgid;
        this.startTicks = startTicks;
        this.mark = markValue == null ? null : MARK_VARIABLE + "=" + markValue;
    }

    /** The live processes of the launch, by pid. */
    List<Long> alive() {
        return ProcessGroups.launchMembers(pgid, mark, startTicks).stream()
                .map(ProcessGroups.Proc::pid)
                .toList();
    }

    /**
     * How a stop went.
     *
     * @param clean every process left on TERM
     * @param outsideGroup processes found by the mark outside the server's group, each signalled by pid
     * @param left processes still alive after KILL
     */
    record Stopped(boolean clean, List<Long> outsideGroup, List<Long> left) {}

    /**
     * TERM to the group and to every marked process outside it, up to {@code termWait} for all to go, then KILL to
     * whatever is left; processes that appear meanwhile (a fork during shutdown) are signalled too. A thread
     * interrupt (a second Ctrl-C) cuts the TERM wait short; the KILL and its wait still run in full, and the
     * interrupt is kept for the caller.
     */
    Stopped stop(Duration termWait, Duration killWait) {
        Set<Long> outside = new TreeSet<>();
        Set<Long> termed = new TreeSet<>();
        boolean interrupted = Thread.interrupted();
        List<ProcessGroups.Proc> now = members();
        if (now.isEmpty()) {
            restore(interrupted);
            return new Stopped(true, List.of(), List.of());
        }
        boolean groupSignalled = false;
        long deadline = System.nanoTime() + termWait.toNanos();
        boolean clean = false;
        while (true) {
            groupSignalled |= signal(now, "TERM", termed, outside, groupSignalled);
            if (interrupted || System.nanoTime() > deadline) {
                break;
            }
            interrupted = pause();
            now = members();
            if (now.isEmpty()) {
                clean = true;
                break;
            }
        }
        if (!clean) {
            long killDeadline = System.nanoTime() + killWait.toNanos();
            Set<Long> killed = new TreeSet<>();
            now = members();
            boolean groupKilled = false;
            while (!now.isEmpty() && System.nanoTime() < killDeadline) {
                groupKilled |= signal(now, "KILL", killed, outside, groupKilled);
                // Dying processes take a moment; the interrupt is not allowed to cut this wait.
                interrupted |= pause();
                now = members();
            }
        }
        List<Long> left = members().stream().map(ProcessGroups.Proc::pid).toList();
        restore(interrupted);
        return new Stopped(clean && left.isEmpty(), List.copyOf(outside), left);
    }

    private List<ProcessGroups.Proc> members() {
        return ProcessGroups.launchMembers(pgid, mark, startTicks);
    }

    // The group gets one signal by its id; a process outside it gets its own, once per kind of signal.
    private boolean signal(
            List<ProcessGroups.Proc> procs, String signal, Set<Long> done, Set<Long> outside, boolean groupDone) {
        boolean groupNow = false;
        List<Long> single = new ArrayList<>();
        for (ProcessGroups.Proc p : procs) {
            if (p.pgid() == pgid) {
                groupNow = true;
            } else {
                outside.add(p.pid());
                if (done.add(p.pid())) {
                    single.add(p.pid());
                }
            }
        }
        if (groupNow && !groupDone) {
            ProcessGroups.signal(pgid, signal);
        }
        boolean force = signal.equals("KILL");
        single.forEach(pid -> ProcessGroups.signalProcess(pid, force));
        return groupNow && !groupDone;
    }

    // True when the pause was interrupted; the interrupt is then cleared here and reported to the caller.
    private static boolean pause() {
        try {
            Thread.sleep(POLL);
            return false;
        } catch (InterruptedException e) {
            return true;
        }
    }

    private static void restore(boolean interrupted) {
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
