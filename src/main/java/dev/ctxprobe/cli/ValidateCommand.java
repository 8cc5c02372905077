package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Check;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.Launchers;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.report.TerminalText;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.run.Experiments;
import dev.ctxprobe.run.Predictions;
import dev.ctxprobe.run.Preflight;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.json.JsonMapper;

/** {@code ctxprobe validate}: checks an experiment file and prints every server command it would run. */
@Command(
        name = "validate",
        mixinStandardHelpOptions = true,
        description = "Check an experiment file and print the resolved plan: every server command per step.")
final class ValidateCommand implements Callable<Integer> {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The missing input whose absence leaves the model-limit check out (predict.BackendSetup names it so). */
    private static final String MODEL_CONFIG = "model config";

    @Parameters(index = "0", paramLabel = "EXPERIMENT.yaml", description = "The experiment file.")
    Path file;

    @Option(names = "--argv", description = "Also print each step's arguments one a line.")
    boolean argv;

    @Mixin
    PredictionOptions prediction;

    @Override
    public Integer call() throws ExperimentError {
        Experiment e = Experiments.load(file);
        Prediction predicted = prediction.predict(e);
        printPlan(Predictions.plan(e, predicted), argv, System.out);
        printWarnings(predicted, System.out);
        printFindings(Preflight.check(e, null, HardwareProbe.system(), System.getenv()), System.out);
        return Main.OK;
    }

    /** The sweep targets no launch can serve, because the model's own limit is below them. */
    static void printWarnings(Prediction predicted, PrintStream out) {
        List<String> skipped = predicted.backends().stream()
                .filter(b -> b.missing().stream().anyMatch(m -> m.name().equals(MODEL_CONFIG)))
                .map(BackendPrediction::backend)
                .toList();
        if (predicted.warnings().isEmpty() && skipped.isEmpty()) {
            return;
        }
        out.println();
        predicted.warnings().forEach(w -> out.println("warning: " + w.message()));
        if (!skipped.isEmpty()) {
            out.println("note: the targets were not checked against the model's own limit for "
                    + String.join(", ", skipped)
                    + ": no model config (give 'model_config: PATH' in the experiment, or --model-config)");
        }
    }

    /**
     * What {@code run} would refuse or warn about on this machine. The file is valid whatever they say: it may be
     * meant for another machine, so they do not change the exit code here.
     */
    static void printFindings(Preflight.Findings found, PrintStream out) {
        if (found.problems().isEmpty() && found.warnings().isEmpty()) {
            return;
        }
        out.println();
        out.println("on this machine:");
        found.problems().forEach(p -> out.println("  run would refuse: " + p));
        found.warnings().forEach(w -> out.println("  warning: " + w));
    }

    /** The plan as {@code validate} and {@code run --dry-run} print it. */
    static void printPlan(Plan plan, boolean argv, PrintStream out) {
        Experiment e = plan.experiment();
        out.printf(
                Locale.ROOT,
                "experiment %s: %d backend(s), strategy %s, context_pad %d, restart %s%n",
                e.name(),
                plan.backends().size(),
                e.sweep().strategy().id(),
                e.contextPad(),
                e.sweep().restart().name().toLowerCase(Locale.ROOT));
        if (e.cells() > 0) {
            out.println(matrixLine(e));
        }
        for (Plan.BackendPlan b : plan.backends()) {
            Experiment.Backend backend = b.backend();
            out.printf(
                    Locale.ROOT,
                    "%nbackend %s (engine %s, %s%s)%n",
                    backend.name(),
                    backend.engine(),
                    backend.port() == null ? "port picked at each launch" : "port " + backend.port(),
                    backend.launcher().kind().equals(Launchers.DEFAULT_KIND)
                            ? ""
                            : ", launcher " + backend.launcher().kind());
            if (backend.command() == null) {
                out.printf("  no launch: requests go to %s:%d%n", backend.host(), backend.port());
            }
            if (backend.check() != null) {
                // docs/experiment-file.md#check
                out.printf(
                        Locale.ROOT,
                        "  check: passkey at depth %s in every step, at depths %s at the frontier, after a control"
                                + " of %,d tokens%n",
                        Check.STEP_DEPTH,
                        backend.check().depths(),
                        backend.check().controlLen());
            }
            for (Plan.Step step : b.steps()) {
                out.printf(
                        Locale.ROOT,
                        "  target %d  max_model_len %s%n",
                        step.target(),
                        step.command().selfSized()
                                ? "fitted by the engine (target then follows from it)"
                                : Long.toString(step.command().maxModelLen()));
                if (backend.command() != null) {
                    out.println("    server_args: "
                            + TerminalText.line(step.command().serverArgs()));
                    // The exact vector, quoted: server_args cannot show where an argument with spaces begins and ends.
                    out.println("    argv: "
                            + JSON.writeValueAsString(step.command().shown()));
                }
                if (argv) {
                    step.command().shown().forEach(a -> out.println("      " + TerminalText.line(a)));
                }
            }
            printStart(b, e, out);
            if (b.searched()) {
                Experiment.Frontier f = e.sweep().frontier();
                out.printf(
                        Locale.ROOT,
                        "  then targets chosen by the search in [%d, %d], aligned to %d, within %.2f%%, at most %d"
                                + " launches%n",
                        f.min(),
                        f.max(),
                        f.align(),
                        f.precision() * 100,
                        f.maxLaunches());
            }
        }
    }

    /**
     * What a matrix multiplies to, said before anything starts: the cells and the most steps they may take
     * (docs/experiment-file.md#matrix).
     */
    static String matrixLine(Experiment e) {
        return String.format(
                Locale.ROOT,
                "matrix: %,d cells, at most %,d steps (limits.max_cells %,d)",
                e.cells(),
                e.maxSteps(),
                e.limits().maxCells());
    }

    /**
     * The capacity map the plan predicts, one level a line, and how {@code sweep.concurrency: auto} will be resolved
     * (docs/search.md#the-capacity-map).
     */
    private static void printSurface(BackendPrediction p, Experiment e, PrintStream out) {
        if (!e.sweep().mapped()) {
            return;
        }
        if (e.sweep().autoConcurrency()) {
            out.println("  sweep.concurrency auto: the levels double from 2 up to what the first server states it"
                    + " holds at once (slots, max_running_requests, its KV pool over align + output_len)");
        }
        if (p == null) {
            return;
        }
        for (BackendPrediction.Level l : p.surface()) {
            out.printf(
                    Locale.ROOT,
                    "  x%d predicted %s (%s)%n",
                    l.concurrency(),
                    l.target() == null ? "none" : String.format(Locale.ROOT, "%,d", l.target()),
                    l.why());
        }
    }

    /** Where the frontier search begins, and why there when a prediction decided it. */
    private static void printStart(Plan.BackendPlan b, Experiment e, PrintStream out) {
        if (!b.searched()) {
            return;
        }
        BackendPrediction p = b.prediction();
        if (b.start() != null && p != null && p.target() != null && !b.start().equals(p.target())) {
            // The search cannot go past its bounds: the first target is the prediction clamped to them, which is
            // not the prediction (docs/search.md#searches-that-start-from-the-plan).
            Experiment.Frontier f = e.sweep().frontier();
            out.printf(
                    Locale.ROOT,
                    "  target %d first: the plan predicts %d (%s; ctxprobe plan shows why), %s; the prediction"
                            + " cannot be measured by this search%n",
                    b.start(),
                    p.target(),
                    p.bound().label(),
                    p.target() > f.max() ? "above frontier.max " + f.max() : "below frontier.min " + f.min());
        } else if (b.start() != null) {
            out.printf(
                    Locale.ROOT,
                    "  target %d is the predicted frontier (%s; ctxprobe plan shows why), then one align above it%n",
                    b.start(),
                    p.bound().label());
        } else if (e.sweep().frontier().start() == Experiment.Start.MAX) {
            out.println("  the search starts at max (sweep.frontier.start: max)");
        } else if (p != null) {
            out.println("  no frontier predicted (" + p.summary() + "): the search starts at max");
        }
        printSurface(p, e, out);
        if (b.twin() != null) {
            out.printf(
                    Locale.ROOT,
                    "  or at the answer of %s once it is measured: the plan predicts both at %d, set by %s%n",
                    b.twin(),
                    p.target(),
                    p.bound().label());
        }
    }
}
