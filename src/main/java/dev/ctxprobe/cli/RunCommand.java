package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.FileReason;
import dev.ctxprobe.explore.Exploration;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.predict.PredictInputs;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.run.Experiments;
import dev.ctxprobe.run.Predictions;
import dev.ctxprobe.run.Preflight;
import dev.ctxprobe.run.Run;
import dev.ctxprobe.run.RunFolder;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ctxprobe run}: explores every backend of an experiment and writes a run folder. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = {
            "Run an experiment: launch each backend at each context length, measure, classify failures.",
            "Without a file, runs the built-in demo on the embedded engine (no GPU needed)."
        })
final class RunCommand implements Callable<Integer> {
    @Parameters(index = "0", arity = "0..1", paramLabel = "EXPERIMENT.yaml", description = "The experiment file.")
    Path file;

    @Option(names = "--out", paramLabel = "DIR", description = "Where run folders go (default: ${DEFAULT-VALUE}).")
    Path out = Path.of("results");

    @Option(names = "--backend", paramLabel = "NAME", description = "Run only this backend (repeatable).")
    List<String> onlyBackends = new ArrayList<>();

    @Option(
            names = "--strategy",
            paramLabel = "list|frontier",
            converter = StrategyOption.class,
            description = "Override the file's sweep.strategy.")
    Experiment.Strategy strategy;

    @Option(names = "--dry-run", description = "Print the plan and launch nothing.")
    boolean dryRun;

    @Option(names = "--resume", paramLabel = "RUN_DIR", description = "Finish an interrupted run in its folder.")
    Path resume;

    @Option(
            names = "--parallel",
            paramLabel = "N",
            description = "Explore up to N backends at once, each with its own servers (default: ${DEFAULT-VALUE}).")
    int parallel = 1;

    @Option(
            names = {"-q", "--quiet"},
            description = "Print only the frontier lines.")
    boolean quiet;

    @Option(
            names = {"-v", "--verbose"},
            description = "Print step starts and failure evidence.")
    boolean verbose;

    @Mixin
    PredictionOptions prediction;

    /** The run's folder once it exists: where results may be kept when the run fails. */
    private Path runDir;

    @Override
    public Integer call() throws ExperimentError {
        // From the first moment to the exit code: a signal while leftovers are stopped or the report is saved must
        // not fall through to the JVM's default, which exits at once.
        Interrupts interrupts = Interrupts.install(Thread.currentThread());
        int code;
        try {
            code = call(interrupts);
        } finally {
            interrupts.close();
        }
        // A signal that came once the last step was done (during its server's stop, the save, or the last moments
        // before this line) did not cut the run short, but whoever sent it must see that it was heard.
        if (code == Main.OK && interrupts.received() > 0) {
            System.out.println("interrupted after the last step: the run is complete, results and report saved");
            return interrupts.exitCode();
        }
        return code;
    }

    private int call(Interrupts interrupts) throws ExperimentError {
        PrintStream stdout = System.out;
        List<String> notices = new ArrayList<>();
        RunFolder folder = null;
        try {
            if (parallel < 1) {
                throw ExitException.usage("--parallel is how many backends run at once: 1 or more, not " + parallel);
            }
            if (resume != null && file != null) {
                throw ExitException.usage("give either EXPERIMENT.yaml or --resume RUN_DIR, not both: --resume"
                        + " continues a run with the experiment kept in its folder (" + RunFolder.EXPERIMENT_COPY
                        + ")");
            }
            if (file != null && RunFolder.isRunFolder(file)) {
                throw ExitException.usage(
                        file + " is a run folder: continue it with '" + Main.program() + " run --resume "
                                + file + "', or start a new run of its experiment with '" + Main.program() + " run "
                                + file.resolve(RunFolder.EXPERIMENT_COPY) + "'");
            }
            Experiment read;
            if (resume != null) {
                runDir = resume;
                folder = RunFolder.resume(resume, notices);
                read = folder.experiment();
            } else {
                read = Experiments.load(file);
            }
            Experiment e = overridden(read);
            if (strategy != null) {
                read.derivedFor(strategy).ifPresent(stdout::println);
            }
            PredictInputs given = prediction.inputs();
            if (dryRun) {
                Prediction predicted = Predictions.of(e, Predictions.onThisMachine(given));
                ValidateCommand.printPlan(Predictions.plan(e, predicted), verbose, stdout);
                ValidateCommand.printWarnings(predicted, stdout);
                ValidateCommand.printFindings(
                        Preflight.check(e, null, HardwareProbe.system(), System.getenv()), stdout);
                return Main.OK;
            }
            notices.forEach(stdout::println);
            if (e.cells() > 0) {
                stdout.println(ValidateCommand.matrixLine(e));
            }
            return execute(e, folder, stdout, given, interrupts);
        } catch (IllegalArgumentException | RunFolder.Refused err) {
            throw ExitException.usage(err.getMessage());
        } catch (Preflight.Refused refused) {
            List<String> lines = new ArrayList<>(refused.findings().problems());
            lines.add("nothing was launched");
            throw ExitException.usage(lines);
        } catch (Exploration.ResumeMismatch mismatch) {
            throw ExitException.usage("the steps in " + resume + " do not fit its experiment (" + mismatch.getMessage()
                    + "); restore the folder's experiment.yaml and results.json, or start a new run");
        } catch (IOException err) {
            throw ExitException.failed(ioProblem(err, runDir));
        } catch (Recorder.NotSaved err) {
            throw ExitException.failed(err.getMessage());
        } catch (UncheckedIOException err) {
            throw ExitException.failed(ioProblem(err.getCause(), runDir));
        } finally {
            if (folder != null) {
                try {
                    folder.close();
                } catch (IOException ignored) {
                    // The lock goes with the process anyway.
                }
            }
        }
    }

    // The path and the system's reason; a Java I/O exception's message is often the path alone. That results are
    // kept is said only where a step's are.
    private static String ioProblem(IOException e, Path runDir) {
        String path = e instanceof java.nio.file.FileSystemException f && f.getFile() != null ? f.getFile() + ": " : "";
        return path
                + FileReason.of(e)
                + (stepsSaved(runDir) ? "; the results written so far are kept in " + runDir : "");
    }

    private static boolean stepsSaved(Path runDir) {
        if (runDir == null) {
            return false;
        }
        try {
            return !dev.ctxprobe.results.ResultFiles.read(runDir.resolve(dev.ctxprobe.results.ResultFiles.NAME))
                    .scenarios()
                    .isEmpty();
        } catch (RuntimeException | dev.ctxprobe.results.ResultFiles.ResultFileException unreadable) {
            return false;
        }
    }

    private Experiment overridden(Experiment e) {
        Experiment chosen = strategy == null ? e : e.withStrategy(strategy);
        return onlyBackends.isEmpty() ? chosen : chosen.withBackends(onlyBackends);
    }

    private int execute(Experiment e, RunFolder folder, PrintStream stdout, PredictInputs given, Interrupts interrupts)
            throws IOException, RunFolder.Refused, Exploration.ResumeMismatch, Preflight.Refused {
        int before = folder == null ? 0 : folder.results().scenarios().size();
        Run.Result result;
        try (Console console =
                new Console(stdout, Console.Style.of(quiet, verbose, parallel > 1), before, System::nanoTime)) {
            Run run = new Run(console, stdout::println, given, parallel, interrupts::finishing);
            try {
                result = folder == null ? run.start(e, Experiments.text(file), file, out) : run.resume(folder, e);
            } finally {
                if (console.runDir() != null) {
                    runDir = console.runDir();
                }
            }
            console.summary(result.document(), result.dir());
        }
        if (result.report() != null && !quiet) {
            stdout.println("report:  " + result.report());
        }
        if (result.report() == null) {
            Main.err("the HTML report could not be written (" + result.reportProblem() + "); run " + Main.program()
                    + " report " + result.dir() + " to retry");
        }
        if (result.ending() == Run.Ending.INTERRUPTED) {
            stdout.println("interrupted: servers stopped, partial results kept; continue with: " + Main.program()
                    + " run --resume " + result.dir());
            return interrupts.exitCode();
        }
        return Main.OK;
    }
}
