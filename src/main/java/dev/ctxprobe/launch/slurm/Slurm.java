package dev.ctxprobe.launch.slurm;

import dev.ctxprobe.hardware.CommandResult;
import dev.ctxprobe.hardware.ProcessCommandRunner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Slurm's own commands ({@code sbatch}, {@code scontrol}, {@code scancel}), run as child processes with a time limit.
 * A Ctrl-C does not cut one short: an {@code sbatch} abandoned half way may still submit a job nobody knows of, so
 * each runs to its end (bounded, {@link ProcessCommandRunner#toTheEnd}) and the interrupt is kept for the caller.
 */
final class Slurm {
    /** scontrol's answer for a job the controller does not hold (never, or purged after MinJobAge). */
    static final String INVALID_JOB = "Invalid job id specified";

    private static final ProcessCommandRunner RUNNER = ProcessCommandRunner.toTheEnd(Duration.ofSeconds(30));
    private static final Pattern KILL_WAIT = Pattern.compile("(?m)^KillWait\\s*=\\s*(\\d+)");

    private Slurm() {}

    /** Runs one Slurm command to its end (at most 30 s); never throws. */
    static CommandResult run(List<String> argv) {
        return RUNNER.run(argv);
    }

    /** As {@link #run(List)}, with {@code env} added to the command's environment. */
    static CommandResult run(List<String> argv, Map<String, String> env) {
        return RUNNER.run(argv, env);
    }

    /** The job as the controller holds it now; empty when it holds none by that id. */
    static Answer job(String id) {
        CommandResult r = run(List.of("scontrol", "show", "job", "-d", "-o", id));
        if (r.succeeded() && !r.stdout().isBlank()) {
            try {
                return new Answer(JobInfo.parse(r.stdout()), false, null);
            } catch (IllegalArgumentException e) {
                return new Answer(null, false, e.getMessage());
            }
        }
        if (r.problem() == null && (r.stdout() + r.stderr()).contains(INVALID_JOB)) {
            return new Answer(null, true, null);
        }
        return new Answer(null, false, r.failure());
    }

    /**
     * What the controller said of a job.
     *
     * @param job the job, or null
     * @param gone the controller holds no such job
     * @param problem why it could not be asked (no answer, not installed), or null
     */
    record Answer(JobInfo job, boolean gone, String problem) {}

    /** Sends the job's steps TERM, then KILL after KillWait (plain scancel); a pending job just leaves the queue. */
    static CommandResult cancel(String id) {
        return run(List.of("scancel", id));
    }

    /** KILL to every step of the job, the batch step included, at once. */
    static CommandResult kill(String id) {
        return run(List.of("scancel", "--signal=KILL", "--full", id));
    }

    /** The address to reach a node at: its NodeAddr, or the name itself when that cannot be read. */
    static String address(String node) {
        CommandResult r = run(List.of("scontrol", "show", "node", "-o", node));
        if (r.succeeded()) {
            Matcher m = Pattern.compile("(?:^|\\s)NodeAddr=(\\S+)").matcher(r.stdout());
            if (m.find()) {
                return m.group(1);
            }
        }
        return node;
    }

    /** The cluster's KillWait (seconds from TERM to KILL at a cancel), if the configuration can be read. */
    static Optional<Duration> killWait() {
        CommandResult r = run(List.of("scontrol", "show", "config"));
        if (r.succeeded()) {
            Matcher m = KILL_WAIT.matcher(r.stdout());
            if (m.find()) {
                return Optional.of(Duration.ofSeconds(Long.parseLong(m.group(1))));
            }
        }
        return Optional.empty();
    }
}
