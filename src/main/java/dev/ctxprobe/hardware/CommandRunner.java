package dev.ctxprobe.hardware;

import java.util.List;

/** Runs a query tool; the seam that lets tests feed recorded outputs. */
@FunctionalInterface
public interface CommandRunner {

    /** Runs {@code command}; never throws, a failure to run is a {@link CommandResult#failed} result. */
    CommandResult run(List<String> command);
}
