package dev.ctxprobe.experiment;

import java.nio.file.Path;

/** A mistake in an experiment file, located at file:line:column, with a sentence saying what to write instead. */
public final class ExperimentError extends Exception {
    private static final long serialVersionUID = 1L;

    private final Path file;
    private final int line;
    private final int column;
    private final String problem;

    public ExperimentError(Path file, int line, int column, String problem) {
        super(format(file, line, column, problem));
        this.file = file;
        this.line = line;
        this.column = column;
        this.problem = problem;
    }

    private static String format(Path file, int line, int column, String problem) {
        return line > 0 ? file + ":" + line + ":" + column + ": " + problem : file + ": " + problem;
    }

    public Path file() {
        return file;
    }

    /** 1-based line, or 0 when the problem concerns the whole file. */
    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    /** The problem without the location. */
    public String problem() {
        return problem;
    }
}
