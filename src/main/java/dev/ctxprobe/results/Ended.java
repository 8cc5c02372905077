package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * How a step's server ended, as written in {@code server.ended}: the exit code or signal of its main process and
 * the reason behind it. The launchers' runtime value ({@code launch.Termination}) is recorded as this.
 *
 * @param exitCode the main process's exit code, null when it was killed by a signal or is unknown
 * @param signal the signal that ended it, null when it exited by itself or is unknown
 * @param detail what the launcher saw, in its own words (a cluster state and reason), or null
 */
public record Ended(Integer exitCode, Integer signal, Reason reason, String detail) {

    /** Why the server ended. */
    public enum Reason {
        /** It exited (or was killed) by itself, not on ctxprobe's request. */
        EXITED,
        /** ctxprobe stopped it (TERM, then KILL if needed). */
        STOPPED,
        /** The kernel or the cluster killed it for exceeding its memory. */
        OUT_OF_MEMORY,
        /** The cluster ended it at its time limit. */
        TIME_LIMIT,
        /** The node it ran on failed. */
        NODE_FAILURE,
        /** The cluster took its resources for another job. */
        PREEMPTED,
        /** Someone other than ctxprobe cancelled it. */
        CANCELLED,
        /** The launcher cannot tell. */
        UNKNOWN;

        @JsonValue
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The exit code as a shell reports it: the code, or 128 + the signal. */
    public Integer shellCode() {
        if (exitCode != null) {
            return exitCode;
        }
        return signal == null ? null : 128 + signal;
    }

    /** One phrase for messages: {@code exit code 1}, {@code signal 9 (KILL)}, with the reason when it is not plain. */
    public String describe() {
        String how;
        if (exitCode != null) {
            how = "exit code " + exitCode;
        } else if (signal != null) {
            how = "signal " + signal + signalName(signal);
        } else {
            how = "an unknown status";
        }
        return switch (reason) {
                    case EXITED, UNKNOWN -> how;
                    case STOPPED -> how + " after ctxprobe stopped it";
                    case OUT_OF_MEMORY -> how + ", killed for exceeding its memory";
                    case TIME_LIMIT -> how + ", ended at its time limit";
                    case NODE_FAILURE -> how + ", its node failed";
                    case PREEMPTED -> how + ", preempted";
                    case CANCELLED -> how + ", cancelled by someone else";
                }
                + (detail == null ? "" : " (" + detail + ")");
    }

    private static String signalName(int signal) {
        return switch (signal) {
            case 6 -> " (ABRT)";
            case 9 -> " (KILL)";
            case 11 -> " (SEGV)";
            case 15 -> " (TERM)";
            default -> "";
        };
    }
}
