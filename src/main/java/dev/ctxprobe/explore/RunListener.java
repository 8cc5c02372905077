package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;

/**
 * What an exploration tells the outside while it runs (the console prints it). The results are saved by the
 * {@link dev.ctxprobe.results.Recorder} before a listener hears of a step, whatever the listener does.
 */
public interface RunListener {
    /** The run has its folder and is about to explore. */
    void runStarted(String experiment, java.nio.file.Path runDir);

    /**
     * A step is about to launch (or, on a reused server, to send): {@code concurrency} prompts of {@code target}
     * tokens at once (1 but for the capacity map's probes).
     */
    void stepStarting(String backend, long target, int concurrency, long maxModelLen);

    /**
     * The step now running entered {@code phase}. Phases come in order but may repeat (each request has its prefill
     * and decoding) or be skipped (a kept server is not launched again). {@code log} is the server's log once it has
     * one, else null. The listener owns any clock: explore only says when a phase begins.
     *
     * <p>Called on the step's own threads, a request's thread included, right after its first token arrived: return
     * at once (record what changed; print from a thread of your own).
     */
    default void stepPhase(String backend, long target, StepPhase phase, java.nio.file.Path log) {}

    /** A step ended; {@code doc} is the whole document as it now stands. */
    void stepFinished(Scenario step, ResultDocument doc);

    /**
     * A matrix cell's search starts at the answer of {@code twin}, a cell the plan proves identical in bound, instead
     * of at its prediction.
     */
    default void startsFromTwin(String backend, String twin, long target) {}

    /**
     * An endpoint already running stated {@code stated} before the first step: the search sends no prompt longer
     * than {@code largestPrompt}.
     */
    default void searchesWithinStated(String backend, ServedCapacity stated, long largestPrompt) {}

    /**
     * Under {@code --parallel}, {@code backend} waits for others to finish before it may start, for {@code reason};
     * said once per backend, before it waits.
     */
    default void backendWaiting(String backend, String reason) {}

    /** A backend's search ended with its answer. */
    void backendFinished(String backend, Frontier frontier, ResultDocument doc);
}
