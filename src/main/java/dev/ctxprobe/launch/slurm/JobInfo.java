package dev.ctxprobe.launch.slurm;

import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One job as {@code scontrol show job -d -o ID} prints it: a line of {@code Key=Value} words. Only the keys ctxprobe
 * reads are kept; the first occurrence wins (with {@code -d} a per-node {@code Nodes=} detail follows later, and a
 * path value with spaces would split into words, all of them after the keys read here).
 */
record JobInfo(Map<String, String> fields) {

    /** States in which the job holds no process any more: Slurm has killed and reaped everything of it. */
    static final Set<String> FINAL = Set.of(
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "NODE_FAIL",
            "PREEMPTED",
            "OUT_OF_MEMORY",
            "BOOT_FAIL",
            "DEADLINE",
            "SPECIAL_EXIT",
            "REVOKED");

    /** States of a job that has not started yet. */
    static final Set<String> WAITING = Set.of("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED");

    /** Slurm's number for "killed by the out-of-memory handler" in a step's derived exit code (0:125). */
    private static final int OOM_SIGNAL = 125;

    private static final Set<String> KEPT = Set.of(
            "JobId",
            "JobName",
            "JobState",
            "Reason",
            "ExitCode",
            "DerivedExitCode",
            "NodeList",
            "BatchHost",
            "Partition",
            "TimeLimit");

    JobInfo {
        fields = Map.copyOf(fields);
    }

    /** Parses one line of {@code scontrol show job -d -o}. */
    static JobInfo parse(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String word : line.strip().split("\\s+")) {
            int eq = word.indexOf('=');
            if (eq > 0 && KEPT.contains(word.substring(0, eq))) {
                fields.putIfAbsent(word.substring(0, eq), word.substring(eq + 1));
            }
        }
        if (!fields.containsKey("JobId") || !fields.containsKey("JobState")) {
            throw new IllegalArgumentException("not a line of scontrol show job -o: " + line.strip());
        }
        return new JobInfo(fields);
    }

    String id() {
        return fields.get("JobId");
    }

    String name() {
        return fields.getOrDefault("JobName", "");
    }

    String state() {
        return fields.get("JobState");
    }

    String reason() {
        return fields.getOrDefault("Reason", "None");
    }

    /** The node of the batch step, where task 0 runs; null before the job is placed. */
    String batchHost() {
        String host = fields.get("BatchHost");
        return host == null || host.isEmpty() ? null : host;
    }

    boolean ended() {
        return FINAL.contains(state());
    }

    boolean waiting() {
        return WAITING.contains(state());
    }

    /**
     * For a waiting job that cannot start without someone's action, the class of that verdict: {@code
     * submit_rejected} for an account or QOS the job may not use, {@code cluster_ended} for a job held (by a user, an
     * administrator, or Slurm after its launch failed: {@code launch_failed_requeued_held}) or waiting on a
     * dependency that can never be satisfied; null for a job that may still start (squeue's man page, "JOB REASON
     * CODES").
     */
    FailureClass neverStarts() {
        if (!waiting()) {
            return null;
        }
        String r = reason();
        if (r.startsWith("InvalidAccount") || r.startsWith("InvalidQOS")) {
            return FailureClass.SUBMIT_REJECTED;
        }
        if (state().equals("REQUEUE_HOLD")
                || r.startsWith("JobHeld")
                || r.startsWith("launch_failed")
                || r.startsWith("DependencyNeverSatisfied")) {
            return FailureClass.CLUSTER_ENDED;
        }
        return null;
    }

    /**
     * How the job ended, in the contract's words. The job's exit code is its batch script's, which is srun's: the
     * largest task exit code, 128 + n for a task killed by signal n.
     *
     * @param stopRequested ctxprobe cancelled it, so a CANCELLED job was stopped, not cancelled by someone else
     */
    Termination termination(boolean stopRequested) {
        String detail = describe();
        int[] exit = pair(fields.getOrDefault("ExitCode", "0:0"));
        int[] derived = pair(fields.getOrDefault("DerivedExitCode", "0:0"));
        Ended.Reason reason = switch (state()) {
            case "COMPLETED", "FAILED" -> derived[1] == OOM_SIGNAL ? Ended.Reason.OUT_OF_MEMORY : Ended.Reason.EXITED;
            case "OUT_OF_MEMORY" -> Ended.Reason.OUT_OF_MEMORY;
            case "CANCELLED" -> stopRequested ? Ended.Reason.STOPPED : Ended.Reason.CANCELLED;
            case "TIMEOUT", "DEADLINE" -> Ended.Reason.TIME_LIMIT;
            case "NODE_FAIL", "BOOT_FAIL" -> Ended.Reason.NODE_FAILURE;
            case "PREEMPTED" -> Ended.Reason.PREEMPTED;
            case "COMPLETING" -> completing(derived);
            default -> Ended.Reason.UNKNOWN;
        };
        if (reason == Ended.Reason.OUT_OF_MEMORY) {
            // The kernel's out-of-memory killer sends KILL; Slurm writes its own 125 in place of the signal.
            return new Termination(null, 9, reason, detail);
        }
        if (exit[1] != 0) {
            return new Termination(null, exit[1], reason, detail);
        }
        if (exit[0] > 128 && exit[0] < 160) {
            return new Termination(null, exit[0] - 128, reason, detail);
        }
        return new Termination(exit[0], null, reason, detail);
    }

    /**
     * A job that is COMPLETING without ctxprobe's cancel: its batch script, srun, has ended, so the engine has, and
     * the exit code is known (COMPLETING comes seconds before FAILED; the fixtures' README has the times). The base
     * state is not shown while it completes; the reason tells a time limit or a node failure.
     */
    private Ended.Reason completing(int[] derived) {
        if (derived[1] == OOM_SIGNAL) {
            return Ended.Reason.OUT_OF_MEMORY;
        }
        return switch (reason()) {
            case "TimeLimit" -> Ended.Reason.TIME_LIMIT;
            case "NodeDown", "NodeFail", "NodeNotResponding" -> Ended.Reason.NODE_FAILURE;
            default -> Ended.Reason.EXITED;
        };
    }

    /** E.g. {@code Slurm job 106 FAILED (NonZeroExitCode), ExitCode 1:0, DerivedExitCode 0:125, on localhost}. */
    String describe() {
        StringBuilder sb =
                new StringBuilder("Slurm job ").append(id()).append(' ').append(state());
        sb.append(" (").append(reason()).append(")");
        sb.append(", ExitCode ").append(fields.getOrDefault("ExitCode", "?"));
        String derived = fields.get("DerivedExitCode");
        if (derived != null && !derived.equals("0:0")) {
            sb.append(", DerivedExitCode ").append(derived);
        }
        if (state().equals("TIMEOUT") && fields.containsKey("TimeLimit")) {
            sb.append(", TimeLimit ").append(fields.get("TimeLimit"));
        }
        String nodes = fields.get("NodeList");
        if (nodes != null && !nodes.isEmpty() && !nodes.equals("(null)")) {
            sb.append(", on ").append(nodes);
        }
        return sb.toString();
    }

    private static int[] pair(String exitCode) {
        int colon = exitCode.indexOf(':');
        try {
            return colon < 0
                    ? new int[] {Integer.parseInt(exitCode), 0}
                    : new int[] {
                        Integer.parseInt(exitCode.substring(0, colon)), Integer.parseInt(exitCode.substring(colon + 1))
                    };
        } catch (NumberFormatException e) {
            return new int[] {0, 0};
        }
    }
}
