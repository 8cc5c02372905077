package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Point;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Chooses the next point of one series (a backend's cell at one concurrency) from the probes so far, and owns
 * everything only the strategy knows: the targets known before running, the answer, what it skipped, whether
 * resumed probes fit it, and whether its first probe lets the engine size itself. It sees nothing but step results;
 * no code outside a strategy asks which strategy runs.
 */
public interface Strategy {

    /** The series whose points this strategy proposes. */
    Point.Series series();

    /** The next point to probe, or empty when this series is done. */
    Optional<Point> next(List<Probe> probes);

    /** The next point's length, or empty when this series is done. */
    default OptionalLong nextTarget(List<Probe> probes) {
        return next(probes).map(p -> OptionalLong.of(p.target())).orElseGet(OptionalLong::empty);
    }

    /** The answer the probes give so far. */
    Frontier answer(List<Probe> probes);

    /** The targets probed whatever happens, in order (a list's targets; a frontier's curve and first probe). */
    List<Long> knownTargets();

    /** True when further targets are chosen from the results (a search), false when they are all known. */
    boolean searched();

    /** The largest target the strategy may probe: where a kept server is launched first. */
    long largestTarget();

    /** The target a search begins at instead of its largest because a prediction said so; null otherwise. */
    default Long start() {
        return null;
    }

    /**
     * This strategy beginning its search at {@code measured} instead (a twin cell's answer); a strategy whose
     * targets are known keeps them.
     */
    default Strategy startingAt(long measured) {
        return this;
    }

    /**
     * This strategy sending no prompt longer than {@code largestPrompt}, the longest an endpoint already running
     * states it serves; a strategy whose targets are known keeps them.
     */
    default Strategy within(long largestPrompt) {
        return this;
    }

    /** Points that will never be probed because the series stopped early; empty while it goes on. */
    default List<Point> skipped(List<Probe> probes) {
        return List.of();
    }

    /**
     * Why probes read back from an earlier run cannot continue under this strategy (a hand-edited file), or empty
     * when they fit.
     */
    default Optional<String> resumeMismatch(List<Probe> probes) {
        return Optional.empty();
    }

    /**
     * True when the launch for {@code next} leaves the context length to the engine ({@code auto_first}): the
     * length the engine fits then decides the target measured, through {@link #selfSizedTarget}.
     */
    default boolean selfSizes(Point next, List<Probe> probes) {
        return false;
    }

    /** The target measured on a server that fitted its own {@code maxModelLen}, asked for at {@code highest}. */
    default long selfSizedTarget(long maxModelLen, long highest) {
        return highest;
    }

    /** The answer the probes give: {@link Frontier#of} with the most recent capacity hint as the prediction. */
    static Frontier hinted(List<Probe> probes, long pad, long promptAllowance) {
        Long predicted = null;
        for (Probe p : probes) {
            Long hinted = p.hintTarget(pad, promptAllowance);
            if (hinted != null) {
                predicted = hinted;
            }
        }
        return Frontier.of(probes.stream().map(Probe::attempt).toList()).withPredictedMax(predicted);
    }
}
