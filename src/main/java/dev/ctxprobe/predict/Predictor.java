package dev.ctxprobe.predict;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Missing;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Predicts, launching nothing, the largest target each backend of an experiment will serve: the engine's rules are
 * applied to the command resolved at a target, and the largest multiple of the frontier's {@code align} they all
 * accept is found by bisection. Rules are taken to be monotonic in the target, as the engines' arithmetic is (vLLM's
 * available memory itself can move with max_model_len, issue 25350: a launch still decides).
 */
public final class Predictor {
    private Predictor() {}

    /** Every backend's prediction and the sweep targets that cannot fit the model. */
    public static Prediction plan(Experiment experiment, PredictInputs inputs, Function<String, Sizing> engines) {
        List<BackendPrediction> predictions = new ArrayList<>();
        for (Backend b : experiment.backends()) {
            predictions.add(predict(experiment, b, inputs, engines));
        }
        return new Prediction(
                experiment.name(),
                experiment.file() == null ? "" : experiment.file().toString(),
                predictions,
                unreachableTargets(experiment, inputs, engines),
                grids(experiment));
    }

    private static List<dev.ctxprobe.results.MatrixGrid> grids(Experiment experiment) {
        List<dev.ctxprobe.results.MatrixGrid.Cell> cells = experiment.backends().stream()
                .map(b -> new dev.ctxprobe.results.MatrixGrid.Cell(b.name(), b.params()))
                .toList();
        return dev.ctxprobe.results.MatrixGrid.of(cells, dev.ctxprobe.results.MatrixGrid.orderOf(cells));
    }

    /** How many align steps past a bisection's failure are evaluated, looking for a target that fits again. */
    static final long NON_MONOTONIC_SCAN = 4096;

    /** The prediction for one backend of {@code experiment}; {@code engines} gives each engine's sizing by name. */
    public static BackendPrediction predict(
            Experiment experiment, Backend backend, PredictInputs inputs, Function<String, Sizing> engines) {
        Sizing sizing = engines.apply(backend.engine());
        BackendSetup s = new BackendSetup(experiment, backend, inputs, sizing);
        EngineModel model = sizing.model(s);
        BackendPrediction kv = predict(s, model);
        if (model != null && kv.target() != null && experiment.sweep().mapped()) {
            kv = kv.withSurface(surface(experiment, s, model, kv.target()));
            if (experiment.sweep().autoConcurrency()) {
                kv = kv.withAssumption("sweep.concurrency auto: "
                        + SurfacePrediction.autoBound(
                                model.evaluate(kv.target()).facts().holds(),
                                s.align,
                                experiment.load().outputLen())
                        + ", as predicted here; the run takes the levels from what its first server states");
            }
        }
        // The floor is shown at the sweep's targets and the predicted one (docs/plan.md).
        TreeSet<Long> at = new TreeSet<>();
        sweepTargets(experiment).forEach(t -> at.add(t.target()));
        if (kv.target() != null) {
            at.add(kv.target());
        }
        return kv.withPrefillFloor(FloorSetup.of(s, List.copyOf(at)));
    }

    /**
     * The capacity map predicted for each {@code sweep.concurrency} above 1 (docs/plan.md#the-capacity-map): the
     * engine's arithmetic for requests at once, applied to the server launched at the predicted frontier, which the
     * map's search keeps.
     */
    private static List<BackendPrediction.Level> surface(
            Experiment experiment, BackendSetup s, EngineModel model, long frontier) {
        SurfacePrediction.Holds holds = model.evaluate(frontier).facts().holds();
        int output = experiment.load().outputLen();
        List<Integer> concurrent = experiment.sweep().autoConcurrency()
                ? SurfacePrediction.autoLevels(holds, s.align, output, Experiment.Sweep.MAX_CONCURRENT)
                : experiment.sweep().concurrent();
        List<BackendPrediction.Level> levels = new ArrayList<>();
        for (int n : concurrent) {
            levels.add(SurfacePrediction.level(n, frontier, experiment.load().outputLen(), s.align, holds));
        }
        return levels;
    }

    private static BackendPrediction predict(BackendSetup s, EngineModel model) {
        Backend backend = s.backend;
        if (model == null) {
            return new BackendPrediction(
                    backend.name(),
                    backend.engine(),
                    null,
                    Bound.UNKNOWN,
                    "nothing is predicted for an endpoint that is already running: ctxprobe launches nothing",
                    null,
                    s.align,
                    s.pad,
                    null,
                    List.of(),
                    s.base().inputs(),
                    List.of(),
                    List.of());
        }
        long align = s.align;
        long steps = (BackendSetup.MAX_LENGTH - s.pad) / align;
        Evaluation first = model.evaluate(align);
        if (!first.fits()) {
            Long largest = align > 1 && model.evaluate(1).fits()
                    ? largestFitting(model, 1, align - 1, Evaluation::fits)
                    : null;
            Check failure = first.failure();
            List<String> lines = new ArrayList<>(first.details());
            lines.add("at target " + Format.tokens(align) + ": " + failure.line());
            String summary;
            Bound bound;
            if (largest != null) {
                bound = Bound.ALIGNMENT;
                summary = "no multiple of align " + Format.tokens(align) + " fits; the largest target that fits is "
                        + Format.tokens(largest);
                lines.add(summary);
            } else if (failure.bound() == Bound.ENGINE_REFUSES) {
                bound = failure.bound();
                summary = "the server cannot start: " + failure.line();
            } else {
                bound = failure.bound();
                summary = "no target fits: at target " + Format.tokens(align) + ", " + failure.line();
            }
            return build(s, null, bound, summary, largest, first, lines);
        }
        Evaluation top = model.evaluate(steps * align);
        if (top.fits()) {
            Facts facts = s.base().plus(first.facts());
            String missing = facts.missing().stream().map(Missing::name).collect(Collectors.joining(", "));
            String summary = "no limit is known from the inputs there are"
                    + (missing.isEmpty() ? "" : " (missing: " + missing + ")");
            // The checks the smallest target passes say nothing about a limit: only the engine's own arithmetic is
            // shown (docs/plan.md, "nothing known").
            List<String> lines = new ArrayList<>(first.details());
            return build(s, null, Bound.UNKNOWN, summary, null, first, lines);
        }
        long lo = bisect(model, align, 1, steps);
        long hi = lo + 1;
        // A rule that rounds twice (llama.cpp's slots: n_ctx padded, then n_ctx / np padded again) is not monotonic:
        // a target may fail while larger ones fit. Bisection alone stops at the first failure, so the targets past
        // it are scanned, and a fitting one starts a new bisection above it.
        long firstFailure = 0;
        long fitsAgain = 0;
        for (long probe = hi + 1; probe <= steps && probe - hi <= NON_MONOTONIC_SCAN; probe++) {
            if (model.evaluate(probe * align).fits()) {
                if (firstFailure == 0) {
                    firstFailure = hi * align;
                    fitsAgain = probe * align;
                }
                lo = bisect(model, align, probe, steps);
                hi = lo + 1;
                probe = hi;
            }
        }
        long target = lo * align;
        Evaluation best = lo == 1 ? first : model.evaluate(target);
        Evaluation next = model.evaluate(hi * align);
        Check failure = next.failure();
        long largest = largestFitting(model, target, target + align - 1, Evaluation::fits);

        List<String> lines = new ArrayList<>(best.details());
        best.checks().forEach(c -> lines.add("at target " + Format.tokens(target) + ": " + c.line()));
        lines.add("at the next target " + Format.tokens(next.target()) + ": " + failure.line());
        if (largest > target) {
            lines.add("the largest target that fits is " + Format.tokens(largest) + "; aligned down to "
                    + Format.tokens(align) + ": " + Format.tokens(target));
        }
        String summary =
                Format.tokens(target) + " tokens, set by " + failure.bound().label() + ": at the next target "
                        + Format.tokens(next.target()) + ", " + failure.line();
        if (firstFailure > 0) {
            String notMonotonic = "not monotonic: target " + Format.tokens(firstFailure) + " does not fit while "
                    + Format.tokens(fitsAgain) + " does; the largest target that fits is " + Format.tokens(target);
            lines.add(notMonotonic);
            summary += "; " + notMonotonic;
        }
        return build(s, target, failure.bound(), summary, largest, best, lines);
    }

    /**
     * The targets of the experiment's sweep that a backend cannot serve because their context is above the model's
     * own limit, whatever the memory: {@code validate} warns about them.
     */
    public static List<TargetWarning> unreachableTargets(
            Experiment experiment, PredictInputs inputs, Function<String, Sizing> engines) {
        List<TargetWarning> warnings = new ArrayList<>();
        for (Backend b : experiment.backends()) {
            Sizing sizing = engines.apply(b.engine());
            BackendSetup s = new BackendSetup(experiment, b, inputs, sizing);
            EngineModel model = sizing.model(s);
            if (model == null) {
                continue;
            }
            Predicate<Evaluation> withinModel =
                    e -> e.checks().stream().noneMatch(c -> c.bound() == Bound.MODEL_CONFIG && !c.passes());
            Long allowed = null;
            for (Target t : sweepTargets(experiment)) {
                Evaluation e = model.evaluate(t.target());
                if (withinModel.test(e)) {
                    continue;
                }
                if (allowed == null) {
                    allowed =
                            withinModel.test(model.evaluate(1)) ? largestFitting(model, 1, t.target(), withinModel) : 0;
                }
                Check failure = e.checks().stream()
                        .filter(c -> c.bound() == Bound.MODEL_CONFIG && !c.passes())
                        .findFirst()
                        .orElseThrow();
                warnings.add(new TargetWarning(
                        b.name(),
                        t.path(),
                        t.target(),
                        t.path() + ": target " + Format.tokens(t.target()) + " cannot be served by " + b.name()
                                + " whatever the memory (" + failure.line() + "); the largest target the model allows"
                                + " is " + Format.tokens(allowed)));
            }
        }
        return warnings;
    }

    private record Target(String path, long target) {}

    private static List<Target> sweepTargets(Experiment e) {
        List<Target> targets = new ArrayList<>();
        Experiment.Sweep sweep = e.sweep();
        if (sweep.strategy() == Experiment.Strategy.LIST) {
            for (int i = 0; i < sweep.targets().size(); i++) {
                targets.add(
                        new Target("sweep.targets[" + i + "]", sweep.targets().get(i)));
            }
            return targets;
        }
        for (int i = 0; i < sweep.curve().size(); i++) {
            targets.add(new Target("sweep.curve[" + i + "]", sweep.curve().get(i)));
        }
        targets.add(new Target("sweep.frontier.max", sweep.frontier().max()));
        return targets;
    }

    /** The largest step in {@code [lo, hi)} whose target fits, given that {@code lo}'s does and {@code hi}'s not. */
    private static long bisect(EngineModel model, long align, long lo, long hi) {
        while (hi - lo > 1) {
            long mid = lo + (hi - lo) / 2;
            if (model.evaluate(mid * align).fits()) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The largest target in {@code [from, to]} that {@code accepts}, given that {@code from} does. */
    private static long largestFitting(EngineModel model, long from, long to, Predicate<Evaluation> accepts) {
        long lo = from;
        long hi = to + 1;
        while (hi - lo > 1) {
            long mid = lo + (hi - lo) / 2;
            if (accepts.test(model.evaluate(mid))) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private static BackendPrediction build(
            BackendSetup s, Long target, Bound bound, String summary, Long largest, Evaluation at, List<String> lines) {
        Facts facts = s.base().plus(at.facts());
        return new BackendPrediction(
                s.backend.name(),
                s.backend.engine(),
                target,
                bound,
                summary,
                largest,
                s.align,
                s.pad,
                at.kv(),
                lines,
                facts.inputs(),
                facts.missing(),
                facts.assumptions());
    }
}
