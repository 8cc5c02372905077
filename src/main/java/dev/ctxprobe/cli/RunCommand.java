package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.explore.Exploration;
import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.LocalLauncher;
import dev.ctxprobe.launch.PidFile;
import dev.ctxprobe.report.Reports;
import dev.ctxprobe.results.NewRun;
import dev.ctxprobe.results.Provenance;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.ResultFiles;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
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
    /** The experiment file kept in each run folder, so that --resume needs nothing else. */
    static final String EXPERIMENT_COPY = "experiment.yaml";

    static final String PID_FILE = "servers.pid";

    @Parameters(index = "0", arity = "0..1", paramLabel = "EXPERIMENT.yaml", description = "The experiment file.")
    Path file;

    @Option(names = "--out", paramLabel = "DIR", description = "Where run folders go (default: ${DEFAULT-VALUE}).")
    Path out = Path.of("results");

    @Option(names = "--backend", paramLabel = "NAME", description = "Run only this backend (repeatable).")
    List<String> onlyBackends = new ArrayList<>();

    @Option(names = "--strategy", paramLabel = "list|frontier", description = "Override the file's sweep.strategy.")
    String strategyOverride;

    @Option(names = "--dry-run", description = "Print the plan and launch nothing.")
    boolean dryRun;

    @Option(names = "--resume", paramLabel = "RUN_DIR", description = "Finish an interrupted run in its folder.")
    Path resume;

    @Option(
            names = {"-q", "--quiet"},
            description = "Print only the frontier lines.")
    boolean quiet;

    @Option(
            names = {"-v", "--verbose"},
            description = "Print step starts and failure evidence.")
    boolean verbose;

    @Override
    public Integer call() {
        PrintStream stdout = System.out;
        Experiment e;
        String text;
        Path script = file == null ? ExperimentInput.DEMO : file;
        try {
            if (resume != null) {
                Path copy = resume.resolve(EXPERIMENT_COPY);
                if (!Files.isRegularFile(copy) || !Files.isRegularFile(resume.resolve(ResultFiles.NAME))) {
                    ValidateCommand.err(resume + " is not a ctxprobe run folder (it needs " + EXPERIMENT_COPY + " and "
                            + ResultFiles.NAME + ")");
                    return Main.USAGE;
                }
                text = Files.readString(copy, StandardCharsets.UTF_8);
                e = ExperimentInput.loader().parse(copy, text);
            } else {
                e = ExperimentInput.load(file);
                text = ExperimentInput.text(file);
            }
        } catch (ExperimentError err) {
            System.err.println(err.getMessage());
            return Main.USAGE;
        } catch (IOException err) {
            ValidateCommand.err("cannot read " + (resume != null ? resume : file) + ": " + err.getMessage());
            return Main.USAGE;
        }
        Experiment.Strategy strategy = e.sweep().strategy();
        if (strategyOverride != null) {
            switch (strategyOverride) {
                case "list" -> strategy = Experiment.Strategy.LIST;
                case "frontier" -> strategy = Experiment.Strategy.FRONTIER;
                default -> {
                    ValidateCommand.err("--strategy is 'list' or 'frontier', not '" + strategyOverride + "'");
                    return Main.USAGE;
                }
            }
            if (!ValidateCommand.canRun(e, strategy)) {
                ValidateCommand.err(ValidateCommand.missingFor(strategy));
                return Main.USAGE;
            }
        }
        List<Backend> backends = selectBackends(e);
        if (backends == null) {
            return Main.USAGE;
        }
        if (dryRun) {
            ValidateCommand.printPlan(e, backends, strategy, verbose, stdout);
            return Main.OK;
        }
        try {
            return execute(e, text, script, strategy, backends, stdout);
        } catch (IOException err) {
            ValidateCommand.err(err.getMessage());
            return Main.FAILED;
        }
    }

    private List<Backend> selectBackends(Experiment e) {
        if (onlyBackends.isEmpty()) {
            return e.backends();
        }
        Set<String> wanted = new LinkedHashSet<>(onlyBackends);
        List<Backend> chosen =
                e.backends().stream().filter(b -> wanted.contains(b.name())).toList();
        wanted.removeAll(chosen.stream().map(Backend::name).toList());
        if (!wanted.isEmpty()) {
            ValidateCommand.err("unknown --backend " + wanted + ": the experiment has "
                    + e.backends().stream().map(Backend::name).toList());
            return null;
        }
        return chosen;
    }

    private int execute(
            Experiment e,
            String text,
            Path script,
            Experiment.Strategy strategy,
            List<Backend> backends,
            PrintStream stdout)
            throws IOException {
        OffsetDateTime started = OffsetDateTime.now(ZoneOffset.UTC);
        Path runDir;
        ResultDocument doc;
        if (resume != null) {
            runDir = resume;
            try {
                doc = ResultFiles.read(runDir.resolve(ResultFiles.NAME));
            } catch (ResultFiles.ResultFileException err) {
                ValidateCommand.err(err.getMessage());
                return Main.USAGE;
            }
            doc = doc.withMetadata(doc.metadata().finished(null));
        } else {
            stopLeftoversOfEarlierRuns(out.resolve(e.name()), stdout);
            runDir = newRunDir(out.resolve(e.name()), started);
            Files.writeString(runDir.resolve(EXPERIMENT_COPY), text, StandardCharsets.UTF_8);
            doc = NewRun.document(
                    e,
                    backends,
                    strategy,
                    hardware(e),
                    new NewRun.Context(
                            runDir.getFileName().toString(),
                            started,
                            HardwareProbe.system().host(),
                            Main.version(),
                            script.toString(),
                            Provenance.pythonEnv(System.getenv()),
                            file == null ? new Provenance.Git("", "clean") : Provenance.git(file)));
        }
        try (RunLock lock = RunLock.tryAcquire(runDir)) {
            if (lock == null) {
                ValidateCommand.err("another ctxprobe is running in " + runDir + "; wait for it or stop it first");
                return Main.USAGE;
            }
            if (resume != null) {
                stopLeftovers(runDir.resolve(PID_FILE), stdout);
            }
            return explore(e, strategy, backends, runDir, doc, stdout);
        }
    }

    private int explore(
            Experiment e,
            Experiment.Strategy strategy,
            List<Backend> backends,
            Path runDir,
            ResultDocument start,
            PrintStream stdout) {
        ResultDocument doc = start;
        Path resultsFile = runDir.resolve(ResultFiles.NAME);
        Console console = new Console(stdout, resultsFile, quiet, verbose);
        console.save(doc);
        if (!quiet) {
            stdout.println("ctxprobe " + Main.version() + ": " + e.name() + " -> " + runDir);
        }
        PidFile pids = new PidFile(runDir.resolve(PID_FILE));
        Exploration exploration =
                new Exploration(e, strategy, new LocalLauncher(pids), HardwareProbe.system(), runDir, console);
        int code = Main.OK;
        try (Interrupts ignored = Interrupts.install(Thread.currentThread())) {
            doc = exploration.run(doc, backends);
        } catch (Exploration.Interrupted interrupted) {
            doc = interrupted.document();
            code = Main.INTERRUPTED;
        } catch (Exploration.ResumeMismatch mismatch) {
            ValidateCommand.err("the steps in " + runDir + " do not fit its experiment (" + mismatch.getMessage()
                    + "); restore the folder's experiment.yaml and results.json, or start a new run");
            return Main.USAGE;
        }
        // A Ctrl-C has done its work once the servers are stopped (or the last step was already done); left
        // pending, it would cut the saving of the results and the report short.
        Thread.interrupted();
        if (code != Main.INTERRUPTED) {
            doc = doc.withMetadata(doc.metadata().finished(NewRun.timestamp(OffsetDateTime.now(ZoneOffset.UTC))));
        }
        console.save(doc);
        console.summary(doc, runDir);
        try {
            Path report = Reports.writeHtml(runDir);
            if (!quiet) {
                stdout.println("report:  " + report);
            }
        } catch (IOException | RuntimeException err) {
            // The results are safe on disk; a report that cannot be drawn must not turn a finished run into an error.
            ValidateCommand.err("the HTML report could not be written (" + err.getMessage() + "); run ctxprobe report "
                    + runDir + " to retry");
        }
        if (code == Main.INTERRUPTED) {
            stdout.println("interrupted: servers stopped, partial results kept; continue with: ctxprobe run --resume "
                    + runDir);
        }
        return code;
    }

    private static Path newRunDir(Path experimentDir, OffsetDateTime started) throws IOException {
        String id = started.format(NewRun.RUN_ID);
        Files.createDirectories(experimentDir);
        Path dir = experimentDir.resolve(id);
        for (int n = 2; Files.exists(dir); n++) {
            dir = experimentDir.resolve(id + "-" + n);
        }
        Files.createDirectories(dir.resolve("logs"));
        return dir;
    }

    private static NewRun.HardwareFacts hardware(Experiment e) {
        Experiment.HardwareSpec given = e.hardware();
        if (given != null && given.name() != null) {
            return new NewRun.HardwareFacts(given.name(), nz(given.accelerator()), nz(given.chip()));
        }
        Hardware hw = HardwareProbe.system().hardware();
        return new NewRun.HardwareFacts(hw.name(), hw.accelerator(), hw.chip());
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    // A run killed with SIGKILL leaves its pid file behind; its servers would hold the port and the memory.
    private static void stopLeftoversOfEarlierRuns(Path experimentDir, PrintStream stdout) throws IOException {
        if (!Files.isDirectory(experimentDir)) {
            return;
        }
        try (DirectoryStream<Path> runs = Files.newDirectoryStream(experimentDir, Files::isDirectory)) {
            for (Path run : runs) {
                if (!Files.exists(run.resolve(PID_FILE))) {
                    continue;
                }
                // A folder whose lock is held belongs to a run that is still going: its servers are not leftovers.
                try (RunLock lock = RunLock.tryAcquire(run)) {
                    if (lock != null) {
                        stopLeftovers(run.resolve(PID_FILE), stdout);
                    }
                }
            }
        }
    }

    private static void stopLeftovers(Path pidFile, PrintStream stdout) {
        new PidFile(pidFile).stopLeftovers(Duration.ofSeconds(10)).forEach(stdout::println);
    }
}
