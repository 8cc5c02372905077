package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Point;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * An experiment's steps as far as they are known before anything runs: per backend, its strategy and the targets it
 * probes whatever happens (a list's targets; a frontier's curve, then its first probe: the predicted frontier or
 * max) with each server command. {@code validate}, {@code run --dry-run} and the run itself read the same plan.
 */
public record Plan(Experiment experiment, List<BackendPlan> backends) {

    public Plan {
        backends = List.copyOf(backends);
    }

    /**
     * One backend's part.
     *
     * @param strategy what chooses the backend's points and gives its answer
     * @param steps the targets known in advance, in order, each with its command (a port picked at launch shows as 0)
     * @param prediction the frontier predicted before the first launch, recorded beside the answer; null for none
     * @param start the target a frontier search begins at instead of max ({@code sweep.frontier.start: plan} with a
     *     predicted target), aligned and within the bounds; null to begin at max (also with {@code auto_first}, whose
     *     first launch the engine sizes itself)
     * @param twin an earlier matrix cell of the same backend that the prediction proves identical in bound (the
     *     same target, set by a rule that is not memory: docs/search.md#matrix), whose measured answer this cell's
     *     search starts at when it is known; null for none
     */
    public record BackendPlan(
            Backend backend,
            EngineProfile profile,
            Strategy strategy,
            List<Step> steps,
            BackendPrediction prediction,
            Long start,
            String twin) {
        public BackendPlan {
            steps = List.copyOf(steps);
        }

        /**
         * This plan's search started at {@code measured}, a twin's answer: probed at it and one {@code align} above,
         * it is proved in two launches (a search that is not a frontier search keeps its targets).
         */
        public BackendPlan startingAt(long measured) {
            Strategy moved = strategy.startingAt(measured);
            return new BackendPlan(backend, profile, moved, steps, prediction, moved.start(), twin);
        }

        /** This plan sending no prompt longer than {@code largestPrompt}, what its endpoint states it serves. */
        public BackendPlan within(long largestPrompt) {
            Strategy narrowed = strategy.within(largestPrompt);
            return new BackendPlan(backend, profile, narrowed, steps, prediction, narrowed.start(), twin);
        }

        /** True when a search picks further targets from the results. */
        public boolean searched() {
            return strategy.searched();
        }

        /** The answer the probes give, with the prediction beside it. */
        Frontier answer(List<Probe> probes) {
            return strategy.answer(probes).withPredicted(prediction).withParams(backend.params());
        }
    }

    /** A step known before running. */
    public record Step(long target, ServerCommand command) {}

    /** The plan of an experiment, with its strategy as given (apply command-line overrides to the experiment first). */
    public static Plan of(Experiment e) {
        return of(e, b -> null);
    }

    /**
     * The plan of an experiment whose backends' frontiers were predicted: a frontier search with {@code start: plan}
     * begins at the predicted target.
     *
     * @param predictions each backend's prediction, or null for none
     */
    public static Plan of(Experiment e, Function<Backend, BackendPrediction> predictions) {
        List<BackendPlan> plans = new ArrayList<>();
        for (Backend b : e.backends()) {
            EngineProfile profile = Engines.profile(b.engine());
            BackendPrediction prediction = predictions.apply(b);
            Strategy strategy = strategy(e, b, profile, prediction);
            List<Step> steps = new ArrayList<>();
            for (long target : strategy.knownTargets()) {
                Point point = strategy.series().at(target);
                // The search's first launch of a self-sizing backend leaves the length to the engine.
                String length = strategy.selfSizes(point, List.of()) ? profile.autoLength() : null;
                steps.add(
                        new Step(target, ServerCommand.resolve(e, b, target, b.port() == null ? 0 : b.port(), length)));
            }
            plans.add(new BackendPlan(
                    b, profile, strategy, steps, prediction, strategy.start(), twin(plans, b, prediction)));
        }
        return new Plan(e, plans);
    }

    /** The bounds whose frontier does not depend on memory: the same target under one of them is the same answer. */
    private static final java.util.Set<Bound> NOT_MEMORY = java.util.EnumSet.of(
            Bound.MODEL_CONFIG, Bound.CONTEXT_FLAG, Bound.ENGINE_PAD, Bound.ENGINE_SLOTS, Bound.ENGINE_RESERVE);

    /**
     * The first earlier cell of the same backend predicted at the same target by the same rule, a rule that does
     * not involve memory: whatever differs between the two cells, the plan proves it does not move the frontier.
     */
    private static String twin(List<BackendPlan> earlier, Backend b, BackendPrediction p) {
        if (b.params().isEmpty() || p == null || p.target() == null || !NOT_MEMORY.contains(p.bound())) {
            return null;
        }
        for (BackendPlan other : earlier) {
            BackendPrediction q = other.prediction();
            if (other.backend().base().equals(b.base())
                    && !other.backend().params().isEmpty()
                    && q != null
                    && p.target().equals(q.target())
                    && p.bound() == q.bound()) {
                return other.backend().name();
            }
        }
        return null;
    }

    /** Whether the server's command changes with the target: rendered at two lengths, its words differ. */
    private static boolean followsTarget(Experiment e, Backend b) {
        if (b.command() == null) {
            return false;
        }
        return !dev.ctxprobe.experiment.ServerCommand.resolve(e, b, 1000, 0)
                .argv()
                .equals(dev.ctxprobe.experiment.ServerCommand.resolve(e, b, 2000, 0)
                        .argv());
    }

    // The one place that reads which strategy the experiment names.
    private static Strategy strategy(Experiment e, Backend b, EngineProfile profile, BackendPrediction prediction) {
        Experiment.Sweep sweep = e.sweep();
        Point.Series series = new Point.Series(b.name(), b.params(), 1);
        if (sweep.strategy() == Experiment.Strategy.LIST) {
            return new ListStrategy(
                    series, sweep.targets(), sweep.stopAfterFailure(), e.contextPad(), profile.promptAllowance());
        }
        Experiment.Frontier f = sweep.frontier();
        // A server whose context does not follow the target (an endpoint already running, a command without
        // {max_model_len} or {target_len}) is never launched with target + pad: the limit it states or names holds
        // the longest prompt plus the engine's allowance, so that is what the search takes off it (docs/search.md).
        long pad = followsTarget(e, b) ? e.contextPad() : profile.promptAllowance();
        FrontierSettings settings = new FrontierSettings(
                f.min(), f.max(), f.precision(), f.align(), f.maxLaunches(), pad, profile.promptAllowance());
        boolean selfSizing =
                b.autoFirst() && profile.autoLength() != null && sweep.restart() == Experiment.Restart.PER_TARGET;
        Long start = f.start() == Experiment.Start.PLAN && prediction != null ? prediction.target() : null;
        return new FrontierStrategy(series, settings, start, sweep.curve(), selfSizing);
    }
}
