package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.predict.BackendPrediction;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * An experiment's steps as far as they are known before anything runs: per backend, the targets its strategy will
 * probe whatever happens (a list's targets; a frontier's curve, then its first probe: the predicted frontier or max)
 * with each server command, and whether a search continues from the answers. {@code validate}, {@code run --dry-run}
 * and the run itself read the same plan.
 */
public record Plan(Experiment experiment, List<BackendPlan> backends) {

    public Plan {
        backends = List.copyOf(backends);
    }

    /**
     * One backend's part.
     *
     * @param steps the targets known in advance, in order, each with its command (a port picked at launch shows as 0)
     * @param searched true when a frontier search picks further targets from the results
     * @param prediction the frontier predicted before the first launch, recorded beside the answer; null for none
     * @param start the target a frontier search begins at instead of max ({@code sweep.frontier.start: plan} with a
     *     predicted target), aligned and within the bounds; null to begin at max (also with {@code auto_first}, whose
     *     first launch the engine sizes itself)
     */
    public record BackendPlan(
            Backend backend,
            EngineProfile profile,
            List<Step> steps,
            boolean searched,
            BackendPrediction prediction,
            Long start) {
        public BackendPlan {
            steps = List.copyOf(steps);
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
            Long start = selfSizes(e, b, profile) ? null : start(e, prediction);
            List<Step> steps = new ArrayList<>();
            for (long target : knownTargets(e, start)) {
                // The search's first launch of a self-sizing backend leaves the length to the engine.
                boolean selfSized = selfSizes(e, b, profile)
                        && target == settings(e, null).highestTarget()
                        && !e.sweep().curve().contains(target);
                steps.add(new Step(
                        target,
                        ServerCommand.resolve(
                                e,
                                b,
                                target,
                                b.port() == null ? 0 : b.port(),
                                selfSized ? profile.autoLength() : null)));
            }
            plans.add(new BackendPlan(
                    b, profile, steps, e.sweep().strategy() == Experiment.Strategy.FRONTIER, prediction, start));
        }
        return new Plan(e, plans);
    }

    private static Long start(Experiment e, BackendPrediction prediction) {
        Experiment.Frontier f = e.sweep().frontier();
        if (e.sweep().strategy() != Experiment.Strategy.FRONTIER
                || f.start() != Experiment.Start.PLAN
                || prediction == null
                || prediction.target() == null) {
            return null;
        }
        return new FrontierStrategy(settings(e, null), prediction.target()).firstTarget();
    }

    private static List<Long> knownTargets(Experiment e, Long start) {
        if (e.sweep().strategy() == Experiment.Strategy.LIST) {
            return e.sweep().targets();
        }
        List<Long> first = new ArrayList<>();
        for (long t : e.sweep().curve()) {
            if (!first.contains(t)) {
                first.add(t);
            }
        }
        long firstProbe = start == null ? settings(e, null).highestTarget() : start;
        if (!first.contains(firstProbe)) {
            first.add(firstProbe);
        }
        return first;
    }

    /** The search of one backend: the list, or the frontier led by the curve. */
    Strategy strategy(BackendPlan b) {
        Experiment.Sweep sweep = experiment.sweep();
        if (sweep.strategy() == Experiment.Strategy.LIST) {
            return new ListStrategy(sweep.targets(), sweep.stopAfterFailure());
        }
        FrontierStrategy search = new FrontierStrategy(settings(experiment, b.profile()), b.start());
        List<Long> curve = sweep.curve();
        if (curve.isEmpty()) {
            return search;
        }
        // The search is stateless, so the curve's lengths simply count among its probes.
        return probes -> {
            for (long target : curve) {
                if (probes.stream().noneMatch(p -> p.target() == target)) {
                    return java.util.OptionalLong.of(target);
                }
            }
            return search.next(probes);
        };
    }

    /** The answer a backend's probes give under this plan's strategy. */
    dev.ctxprobe.results.Frontier answer(BackendPlan b, List<Probe> probes) {
        dev.ctxprobe.results.Frontier measured = experiment.sweep().strategy() == Experiment.Strategy.LIST
                ? Strategy.answer(probes, experiment.contextPad(), promptAllowance(b.profile()))
                : new FrontierStrategy(settings(experiment, b.profile()), b.start()).summary(probes);
        return measured.withPredicted(b.prediction());
    }

    /**
     * True when the backend's search starts with a launch that fits its own length ({@code auto_first}, an engine
     * that can, a frontier with a server per target).
     */
    static boolean selfSizes(Experiment e, Backend b, EngineProfile profile) {
        return b.autoFirst()
                && profile.autoLength() != null
                && e.sweep().strategy() == Experiment.Strategy.FRONTIER
                && e.sweep().restart() == Experiment.Restart.PER_TARGET;
    }

    /** The bounds and alignment of one backend's frontier search. */
    FrontierSettings frontierSettings(BackendPlan b) {
        return settings(experiment, b.profile());
    }

    private static FrontierSettings settings(Experiment e, EngineProfile profile) {
        Experiment.Frontier f = e.sweep().frontier();
        return new FrontierSettings(
                f.min(),
                f.max(),
                f.precision(),
                f.align(),
                f.maxLaunches(),
                e.contextPad(),
                profile == null ? 0 : promptAllowance(profile));
    }

    // How far below a prompt-length hint the largest accepted prompt lies, by the engine's own rule.
    static long promptAllowance(EngineProfile profile) {
        return profile.promptAllowance();
    }
}
