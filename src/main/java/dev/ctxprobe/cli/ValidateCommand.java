package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.Launchers;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.run.Experiments;
import dev.ctxprobe.run.Predictions;
import dev.ctxprobe.run.Preflight;
import java.io.PrintStream;
import java.nio.file.Path;
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
        if (predicted.warnings().isEmpty()) {
            return;
        }
        out.println();
        predicted.warnings().forEach(w -> out.println("warning: " + w.message()));
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
            for (Plan.Step step : b.steps()) {
                out.printf(
                        Locale.ROOT,
                        "  target %d  max_model_len %s%n",
                        step.target(),
                        step.command().selfSized()
                                ? "fitted by the engine (target then follows from it)"
                                : Long.toString(step.command().maxModelLen()));
                if (backend.command() != null) {
                    out.println("    server_args: " + step.command().serverArgs());
                    // The exact vector, quoted: server_args cannot show where an argument with spaces begins and ends.
                    out.println("    argv: "
                            + JSON.writeValueAsString(step.command().argv()));
                }
                if (argv) {
                    step.command().argv().forEach(a -> out.println("      " + a));
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

    /** Where the frontier search begins, and why there when a prediction decided it. */
    private static void printStart(Plan.BackendPlan b, Experiment e, PrintStream out) {
        if (!b.searched()) {
            return;
        }
        BackendPrediction p = b.prediction();
        if (b.start() != null) {
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
    }
}
