package dev.ctxprobe.launch;

import dev.ctxprobe.results.Ended;

/**
 * How a server ended, as far as its launcher can tell: the exit code or signal of its main process and the reason
 * behind it. A local launcher knows whether ctxprobe stopped it; a cluster launcher also knows an out-of-memory
 * kill, a time limit, a node failure or a cancellation by someone else.
 *
 * @param exitCode the main process's exit code, null when it was killed by a signal or is unknown
 * @param signal the signal that ended it, null when it exited by itself or is unknown
 * @param detail what the launcher saw, in its own words (a cluster state and reason), or null
 */
public record Termination(Integer exitCode, Integer signal, Ended.Reason reason, String detail) {

    /** A process that ended by itself with a wait status turned exit code (128 + n for signal n, as shells do). */
    public static Termination exited(int exitCode) {
        return exitCode > 128 && exitCode < 160
                ? new Termination(null, exitCode - 128, Ended.Reason.EXITED, null)
                : new Termination(exitCode, null, Ended.Reason.EXITED, null);
    }

    /** A process that ctxprobe stopped; whatever it exited with, it was asked to. */
    public static Termination stopped(Integer exitCode) {
        if (exitCode != null && exitCode > 128 && exitCode < 160) {
            return new Termination(null, exitCode - 128, Ended.Reason.STOPPED, null);
        }
        return new Termination(exitCode, null, Ended.Reason.STOPPED, null);
    }

    /** The end as the step records it. */
    public Ended recorded() {
        return new Ended(exitCode, signal, reason, detail);
    }

    /** The exit code as a shell reports it: the code, or 128 + the signal. */
    public Integer shellCode() {
        return recorded().shellCode();
    }

    /** One phrase for messages: {@code exit code 1}, {@code signal 9 (KILL)}, with the reason when it is not plain. */
    public String describe() {
        return recorded().describe();
    }
}
