package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ServerCommand;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
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

    @Override
    public Integer call() {
        Experiment e;
        try {
            e = ExperimentInput.load(file);
        } catch (ExperimentError err) {
            System.err.println(err.getMessage());
            return Main.USAGE;
        }
        printPlan(e, e.backends(), e.sweep().strategy(), argv, System.out);
        return Main.OK;
    }

    /** The plan as {@code validate} and {@code run --dry-run} print it. */
    static void printPlan(
            Experiment e, List<Backend> backends, Experiment.Strategy strategy, boolean argv, PrintStream out) {
        out.printf(
                Locale.ROOT,
                "experiment %s: %d backend(s), strategy %s, context_pad %d, restart %s%n",
                e.name(),
                backends.size(),
                strategy.name().toLowerCase(Locale.ROOT),
                e.contextPad(),
                e.sweep().restart().name().toLowerCase(Locale.ROOT));
        for (Backend b : backends) {
            out.printf(
                    Locale.ROOT,
                    "%nbackend %s (engine %s, %s)%n",
                    b.name(),
                    b.engine(),
                    b.port() == null ? "port picked at each launch" : "port " + b.port());
            if (b.command() == null) {
                out.printf("  no launch: requests go to %s:%d%n", b.host(), b.port());
            }
            for (long target : targets(e, strategy)) {
                ServerCommand c = ServerCommand.resolve(e, b, target, b.port() == null ? 0 : b.port());
                out.printf(Locale.ROOT, "  target %d  max_model_len %d%n", target, c.maxModelLen());
                if (b.command() != null) {
                    out.println("    server_args: " + c.serverArgs());
                    // The exact vector, quoted: server_args cannot show where an argument with spaces begins and ends.
                    out.println("    argv: " + JSON.writeValueAsString(c.argv()));
                }
                if (argv) {
                    c.argv().forEach(a -> out.println("      " + a));
                }
            }
            if (strategy == Experiment.Strategy.FRONTIER) {
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

    // The list's targets, or the frontier's curve and first probe (max): later probes depend on results.
    private static List<Long> targets(Experiment e, Experiment.Strategy strategy) {
        if (strategy == Experiment.Strategy.LIST) {
            return e.sweep().targets();
        }
        Experiment.Frontier f = e.sweep().frontier();
        List<Long> first = new ArrayList<>(e.sweep().curve());
        first.add(f.max() / f.align() * f.align());
        return first;
    }

    /** Used by {@code run --dry-run} to explain an experiment that sets no list for a list override. */
    static boolean canRun(Experiment e, Experiment.Strategy strategy) {
        return strategy == Experiment.Strategy.LIST
                ? !e.sweep().targets().isEmpty()
                : e.sweep().frontier() != null;
    }

    static String missingFor(Experiment.Strategy strategy) {
        return strategy == Experiment.Strategy.LIST
                ? "--strategy list needs 'sweep.targets' in the experiment file"
                : "--strategy frontier needs 'sweep.frontier: {min: ..., max: ...}' in the experiment file";
    }

    static void err(String message) {
        System.err.println("ctxprobe: " + message);
    }
}
