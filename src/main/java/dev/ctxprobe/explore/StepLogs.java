package dev.ctxprobe.explore;

import dev.ctxprobe.results.Point;
import java.nio.file.Path;

/** Where the servers' logs of a run go: the run folder names them. */
public interface StepLogs {

    /** The run folder, which the names are relative to. */
    Path dir();

    /** A log file, relative to {@link #dir()}, that no earlier launch of the run wrote: one per launch at {@code point}. */
    String fresh(Point point);
}
