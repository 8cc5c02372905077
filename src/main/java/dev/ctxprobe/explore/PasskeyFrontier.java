package dev.ctxprobe.explore;

import dev.ctxprobe.experiment.Check;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which steps ask the pass key at {@code check.depths} (docs/search.md#the-frontier-of-right-answers): the ones at
 * the frontier. A step cannot know whether a later one will serve more, but its server is up only while it runs, so
 * the step that serves more than any before it of its backend and cell asks them: the frontier so far. The served
 * frontier's own step is always one of them, and no step below it asks.
 */
final class PasskeyFrontier {

    /** The largest target each series of single prompts served so far; backends run in parallel share it. */
    private final Map<Point.Series, Long> served = new HashMap<>();

    /** A run with nothing served yet. */
    PasskeyFrontier() {}

    /** A run that served the {@code steps} it recorded: a resumed step asks only above them. */
    static PasskeyFrontier resumed(List<Scenario> steps) {
        PasskeyFrontier frontier = new PasskeyFrontier();
        for (Scenario s : steps) {
            if (s.success()) {
                frontier.served(s.point());
            }
        }
        return frontier;
    }

    /**
     * Records that {@code point} was served and says whether it is the frontier so far: a single prompt longer than
     * any its series served before. A capacity map's probe of several prompts at once never is.
     */
    synchronized boolean served(Point point) {
        if (point.concurrency() != 1) {
            return false;
        }
        Long before = served.get(point.series());
        if (before != null && point.target() <= before) {
            return false;
        }
        served.put(point.series(), point.target());
        return true;
    }

    /**
     * The depths of {@code check.depths} that need requests of their own: the step's measured requests already
     * carry a key at {@link Check#STEP_DEPTH}.
     */
    static double[] asked(List<Double> depths) {
        return depths.stream()
                .mapToDouble(Double::doubleValue)
                .filter(d -> d != Check.STEP_DEPTH)
                .toArray();
    }
}
