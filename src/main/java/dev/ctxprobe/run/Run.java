package dev.ctxprobe.run;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.explore.Exploration;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.explore.RunListener;
import dev.ctxprobe.explore.ServerClient;
import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.LaunchContext;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.Launchers;
import dev.ctxprobe.predict.PredictInputs;
import dev.ctxprobe.results.NewRun;
import dev.ctxprobe.results.Provenance;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * One run of an experiment in its folder: the launchers its backends name, the exploration, the results saved after
 * every step, and the report at the end. The caller (the command line) chooses the folder, listens, and turns the
 * result into an exit code.
 *
 * @param listener hears of every step as it starts and ends (from several threads when {@code parallel} is above 1)
 * @param notices lines for the user beside the steps (leftover servers stopped)
 * @param predictInputs what the predictions a search starts from use besides the file and this machine ({@code
 *     --model-config}, {@code --weights-gib}, {@code --devices}, {@code --memory-gib})
 * @param parallel how many backends are explored at once
 * @param finishing called once the servers are stopped, before the results and the report are saved: from then on
 *     nothing must interrupt the run's thread (a signal handler stops interrupting it)
 */
public record Run(
        RunListener listener, Consumer<String> notices, PredictInputs predictInputs, int parallel, Runnable finishing) {
    /** How a run ended. */
    public enum Ending {
        COMPLETED,
        INTERRUPTED
    }

    /**
     * What a run produced.
     *
     * @param report the HTML report, or null when it could not be written ({@code reportProblem} says why)
     */
    public record Result(Ending ending, ResultDocument document, Path dir, Path report, String reportProblem) {}

    public Run(RunListener listener, Consumer<String> notices) {
        this(listener, notices, PredictInputs.none(), 1);
    }

    public Run(RunListener listener, Consumer<String> notices, PredictInputs predictInputs, int parallel) {
        this(listener, notices, predictInputs, parallel, () -> {});
    }

    /**
     * A new run of {@code e} in a new folder under {@code out}.
     *
     * @param text the experiment file's text, kept in the folder
     * @param file the experiment file, or null for the built-in demo (no git provenance then)
     */
    public Result start(Experiment e, String text, Path file, Path out)
            throws IOException, RunFolder.Refused, Exploration.ResumeMismatch, Preflight.Refused {
        preflight(e, out);
        OffsetDateTime started = OffsetDateTime.now(ZoneOffset.UTC);
        java.util.List<String> found = new java.util.ArrayList<>();
        // The copy --resume reads: a key written in a command is masked in it too (docs/experiment-file.md#secrets).
        try (RunFolder folder = RunFolder.create(out, e, redactor(e).mask(text), started, found)) {
            found.forEach(notices);
            ResultDocument doc = NewRun.document(
                    e,
                    e.backends(),
                    e.sweep().strategy(),
                    hardware(e),
                    new NewRun.Context(
                            folder.dir().getFileName().toString(),
                            started,
                            HardwareProbe.system().host(),
                            Version.of(),
                            (file == null ? Experiments.DEMO : file).toString(),
                            Provenance.pythonEnv(System.getenv()),
                            file == null ? new Provenance.Git("", "clean") : Provenance.git(file)));
            Recorder recorder;
            try {
                recorder = new Recorder(folder.resultsFile(), doc, redactor(e));
            } catch (Recorder.NotSaved noRoom) {
                // Before the first step: nothing is lost, and nothing may be left that --resume would refuse.
                folder.discard();
                throw new RunFolder.Refused(
                        noRoom.getMessage().replace("; the file still holds the last step saved", "")
                                + "; nothing was launched and the run folder was removed: free some space or give"
                                + " another --out");
            }
            return explore(folder, e, recorder);
        }
    }

    /** Finishes the run held in {@code folder} with {@code e}, its experiment (overrides applied). */
    public Result resume(RunFolder folder, Experiment e)
            throws IOException, RunFolder.Refused, Exploration.ResumeMismatch, Preflight.Refused {
        preflight(e, folder.dir());
        ResultDocument doc = folder.results();
        try (PortLocks ports = PortLocks.acquire(e, folder.dir())) {
            return explore(
                    folder,
                    e,
                    new Recorder(
                            folder.resultsFile(),
                            doc.withMetadata(doc.metadata().finished(null)),
                            redactor(e)),
                    doc);
        }
    }

    // Before the run folder exists and before the first launch: a missing program refuses the run, it does not fail
    // every step.
    private void preflight(Experiment e, Path writeTo) throws Preflight.Refused {
        Preflight.Findings found = Preflight.check(e, writeTo, HardwareProbe.system(), System.getenv());
        found.warnings().forEach(w -> notices.accept("warning: " + w));
        if (!found.ok()) {
            throw new Preflight.Refused(found);
        }
    }

    private Result explore(RunFolder folder, Experiment e, Recorder recorder) throws Exploration.ResumeMismatch {
        return explore(folder, e, recorder, null);
    }

    /**
     * @param resumed the document a {@code --resume} started from, or null for a new run: a finished run that had no
     *     step left keeps its {@code finished_at} (docs/results.md), and the user hears that nothing was left to run
     */
    private Result explore(RunFolder folder, Experiment e, Recorder recorder, ResultDocument resumed)
            throws Exploration.ResumeMismatch {
        Redactor redactor = redactor(e);
        listener.runStarted(e.name(), folder.dir());
        // Backends explored at once ask for their launchers from their own threads.
        Map<Experiment.Launcher, Launcher> launchers = new ConcurrentHashMap<>();
        LaunchContext context = new LaunchContext(
                folder.dir(),
                folder.ledger(),
                HardwareProbe.system(),
                redactor,
                e.passEnv(),
                e.limits().serverLogBytes());
        Exploration exploration = new Exploration(
                plan(e),
                (Backend b) -> launchers.computeIfAbsent(
                        b.launcher(), l -> Launchers.provider(l.kind()).create(context, l.options())),
                folder,
                recorder,
                listener,
                parallel,
                ServerClient.HTTP);
        Ending ending = Ending.COMPLETED;
        try {
            exploration.run();
        } catch (Exploration.Interrupted interrupted) {
            ending = Ending.INTERRUPTED;
        } catch (RuntimeException | Error fault) {
            // Whatever ended the run (a full disk, an OutOfMemoryError), no server it started may outlive it.
            stopWhatIsLeft(folder, e);
            throw fault;
        } finally {
            launchers.values().forEach(Launcher::close);
        }
        // A Ctrl-C has done its work once the servers are stopped (or the last step was already done); left
        // pending, it would cut the saving of the results and the report short, and so would a later one.
        finishing.run();
        Thread.interrupted();
        ResultDocument doc = recorder.document();
        boolean nothingRan = resumed != null
                && resumed.metadata().finishedAt() != null
                && doc.scenarios().size() == resumed.scenarios().size();
        if (ending == Ending.COMPLETED && nothingRan) {
            doc = recorder.update(
                    d -> d.withMetadata(d.metadata().finished(resumed.metadata().finishedAt())));
            notices.accept("nothing left to run: every step of " + folder.dir() + " was done when it finished at "
                    + resumed.metadata().finishedAt() + "; its results are unchanged");
        } else if (ending == Ending.COMPLETED) {
            doc = recorder.update(
                    d -> d.withMetadata(d.metadata().finished(NewRun.timestamp(OffsetDateTime.now(ZoneOffset.UTC)))));
        }
        try {
            return new Result(ending, doc, folder.dir(), folder.writeReport(), null);
        } catch (IOException | RuntimeException err) {
            // The results are safe on disk; a report that cannot be drawn must not turn a finished run into an error.
            return new Result(ending, doc, folder.dir(), null, String.valueOf(err.getMessage()));
        }
    }

    // The servers the ledger still names are those no stop has seen gone.
    private void stopWhatIsLeft(RunFolder folder, Experiment e) {
        boolean interrupted = Thread.interrupted();
        try {
            Launchers.stopLeftovers(folder.ledger(), e.timeouts().shutdown()).forEach(notices);
        } catch (RuntimeException | Error alsoBroken) {
            // The first fault is the one to report; the servers file still names what is left for the next run.
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * What is masked in this run's logs and results: the values of the variables the experiment names as secret and
     * of those whose names look secret, in ctxprobe's environment and in the experiment's {@code env}.
     */
    static Redactor redactor(Experiment e) {
        java.util.List<Map<String, String>> envs = new java.util.ArrayList<>();
        envs.add(System.getenv());
        envs.add(e.env());
        e.backends().forEach(b -> envs.add(b.env()));
        java.util.List<String> inCommands = new java.util.ArrayList<>();
        e.backends()
                .forEach(
                        b -> inCommands.addAll(ServerCommand.resolve(e, b, 0, 0).secrets()));
        return Redactor.of(e.secretNames(), envs).with(inCommands);
    }

    /** The plan with each backend's predicted frontier: where a {@code start: plan} search begins. */
    private Plan plan(Experiment e) {
        try {
            return Predictions.plan(e, Predictions.of(e, Predictions.onThisMachine(predictInputs)));
        } catch (RuntimeException err) {
            // A prediction only saves launches: a search from max still finds the frontier.
            notices.accept("no prediction (" + err.getMessage() + "): the frontier search starts at max");
            return Plan.of(e);
        }
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
}
