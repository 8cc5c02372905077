package dev.ctxprobe.report;

import java.nio.file.Path;

/** A report input that cannot be read: missing, unreadable, not JSON, or not a results file. */
public final class ReportInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Path input;

    ReportInputException(Path input, String problem) {
        super(input + ": " + problem);
        this.input = input;
    }

    ReportInputException(Path input, String problem, Throwable cause) {
        super(input + ": " + problem, cause);
        this.input = input;
    }

    /** The file or folder the problem is in. */
    public Path input() {
        return input;
    }
}
