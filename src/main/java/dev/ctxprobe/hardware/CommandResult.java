package dev.ctxprobe.hardware;

import java.util.List;
import java.util.Objects;

/**
 * What running one query tool gave: its exit code and output, or why it could not run.
 *
 * @param exitCode the tool's exit code; meaningless when {@code problem} is set
 * @param problem null when the tool ran to the end, else why it did not (absent, timed out, I/O error)
 */
public record CommandResult(List<String> command, int exitCode, String stdout, String stderr, String problem) {

    /** The problem of a tool that is not on the PATH. */
    public static final String NOT_INSTALLED = "not installed (not on PATH)";

    public CommandResult {
        command = List.copyOf(command);
        Objects.requireNonNull(stdout, "stdout");
        Objects.requireNonNull(stderr, "stderr");
    }

    /** A tool that ran and exited. */
    public static CommandResult exited(List<String> command, int exitCode, String stdout, String stderr) {
        return new CommandResult(command, exitCode, stdout, stderr, null);
    }

    /** A tool that could not run or did not finish. */
    public static CommandResult failed(List<String> command, String problem) {
        return new CommandResult(command, -1, "", "", Objects.requireNonNull(problem, "problem"));
    }

    /** True when the tool is not installed, as opposed to installed but failing. */
    public boolean absent() {
        return NOT_INSTALLED.equals(problem);
    }

    /** True when the tool ran and exited with 0. */
    public boolean succeeded() {
        return problem == null && exitCode == 0;
    }

    /** Why the output cannot be used, for a reason text; null when it succeeded. */
    public String failure() {
        if (problem != null) {
            return command.getFirst() + ": " + problem;
        }
        if (exitCode != 0) {
            String head = (stdout + "\n" + stderr).strip().lines().findFirst().orElse("");
            return command.getFirst() + ": exit code " + exitCode + (head.isEmpty() ? "" : " (" + head + ")");
        }
        return null;
    }
}
