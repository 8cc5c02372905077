package dev.ctxprobe.cli;

import java.util.List;

/**
 * Ends a command with an exit code and the sentences that tell the user why: thrown anywhere in a command and
 * printed by {@link Main}'s one handler, so that no command prints its own errors or returns their codes, and no
 * stack trace reaches the user.
 */
final class ExitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What follows the sentences: nothing, the line that points at {@code --help}, or the command's usage. */
    enum Help {
        NONE,
        HINT,
        USAGE
    }

    private final int code;
    private final List<String> lines;
    private final boolean byCommand;
    private final Help help;

    private ExitException(int code, List<String> lines, boolean byCommand, Help help) {
        super(String.join("\n", lines));
        this.code = code;
        this.lines = List.copyOf(lines);
        this.byCommand = byCommand;
        this.help = help;
    }

    /** Bad input (the command line, a file, a folder): exit code 2, one line per sentence. */
    static ExitException usage(String... lines) {
        return usage(List.of(lines));
    }

    /** Bad input told in several sentences. */
    static ExitException usage(List<String> lines) {
        return new ExitException(Main.USAGE, lines, false, Help.NONE);
    }

    /** What the user asked for could not be done (a disk that refuses a write): exit code 1. */
    static ExitException failed(String... lines) {
        return new ExitException(Main.FAILED, List.of(lines), false, Help.NONE);
    }

    /** The same, said by the command ({@code ctxprobe report: ...}) rather than by the program. */
    ExitException byCommand() {
        return new ExitException(code, lines, true, help);
    }

    /** The same, followed by {@code help}. */
    ExitException then(Help next) {
        return new ExitException(code, lines, byCommand, next);
    }

    int code() {
        return code;
    }

    /** The sentences, each printed on a line of its own. */
    List<String> lines() {
        return lines;
    }

    /** Whether each line starts with the command's name ({@code ctxprobe report}) instead of {@code ctxprobe}. */
    boolean saidByCommand() {
        return byCommand;
    }

    Help help() {
        return help;
    }
}
