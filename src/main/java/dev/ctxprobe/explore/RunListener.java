package dev.ctxprobe.explore;

import dev.ctxprobe.results.FrontierEntry;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;

/** What an exploration tells the outside while it runs: the console prints it, the results file stores it. */
public interface RunListener {
    /** A step is about to launch (or, on a reused server, to send). */
    void stepStarting(String backend, long target, long maxModelLen);

    /** A step ended; {@code doc} is the whole document as it now stands. */
    void stepFinished(Scenario step, ResultDocument doc);

    /** A backend's search ended with its answer. */
    void backendFinished(String backend, FrontierEntry frontier, ResultDocument doc);
}
