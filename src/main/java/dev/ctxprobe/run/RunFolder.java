package dev.ctxprobe.run;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ExperimentLoader;
import dev.ctxprobe.explore.StepLogs;
import dev.ctxprobe.launch.Launchers;
import dev.ctxprobe.launch.Ledger;
import dev.ctxprobe.report.Reports;
import dev.ctxprobe.results.NewRun;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.ResultFiles;
import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * One run's folder, {@code <out>/<experiment>/<run_id>/}: {@code results.json}, the experiment as run ({@code
 * experiment.yaml}, what {@code --resume} reads), {@code logs/}, the servers file of live servers ({@link Ledger}),
 * {@code run.lock} while a run holds it, and {@code report.html} at the end. Held (locked) from opening to close.
 */
public final class RunFolder implements AutoCloseable, StepLogs {
    /** The experiment file kept in each run folder, so that --resume needs nothing else. */
    public static final String EXPERIMENT_COPY = "experiment.yaml";

    private static final Duration LEFTOVER_WAIT = Duration.ofSeconds(10);

    private final Path dir;
    private final RunLock lock;
    private final RunLock experimentLock;
    private final Ledger ledger;
    /** The fixed ports held for a new run; a resumed run holds its own once its experiment is read. */
    private PortLocks ports;
    /** Whether creating this new run's folder made its experiment's folder too. */
    private boolean newExperimentDir;

    private RunFolder(Path dir, RunLock lock, RunLock experimentLock) {
        this.dir = dir;
        this.lock = lock;
        this.experimentLock = experimentLock;
        this.ledger = new Ledger(dir);
    }

    /**
     * One run per experiment folder ({@code <out>/<experiment>/}) at a time: two would launch on the same fixed ports
     * and each record the other's servers. The lock file lives beside the port locks, named by the folder's real path,
     * so that the experiment folder holds nothing but run folders.
     */
    private static RunLock lockExperiment(Path experimentDir, String experiment, Path runDir)
            throws IOException, Refused {
        Path file = PortLocks.folder()
                .resolveSibling("experiments")
                .resolve(PortLocks.key(realPath(experimentDir).toString()) + ".lock");
        Files.createDirectories(file.getParent());
        RunLock held = RunLock.tryAcquire(
                file, "ctxprobe pid " + ProcessHandle.current().pid() + (runDir == null ? "" : " in " + runDir));
        if (held == null) {
            throw new Refused("another run of " + experiment + " is going on (" + RunLock.holder(file)
                    + "): wait for it to end, or give this run another --out folder; nothing was launched");
        }
        return held;
    }

    /** A folder that cannot be used, in one sentence saying what to do. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /**
     * A new run's folder under {@code out}, named by the start time; the servers that killed runs of the same
     * experiment left behind are stopped first (each reported to {@code notices}).
     */
    public static RunFolder create(
            Path out, Experiment e, String experimentText, OffsetDateTime started, List<String> notices)
            throws IOException, Refused {
        Path experimentDir = out.resolve(e.name());
        String id = started.format(NewRun.RUN_ID);
        Path dir = experimentDir.resolve(id);
        for (int n = 2; Files.exists(dir); n++) {
            dir = experimentDir.resolve(id + "-" + n);
        }
        boolean newExperimentDir = !Files.exists(experimentDir);
        RunLock experimentLock = lockExperiment(experimentDir, e.name(), dir);
        PortLocks ports = null;
        RunLock lock = null;
        boolean created = false;
        try {
            ports = PortLocks.acquire(e, experimentDir);
            notices.addAll(stopLeftoversOfEarlierRuns(experimentDir));
            Files.createDirectories(dir.resolve("logs"));
            created = true;
            lock = RunLock.tryAcquire(dir);
            if (lock == null) {
                created = false;
                throw new Refused("another ctxprobe took " + dir + " at the same moment; run again");
            }
            Files.writeString(dir.resolve(EXPERIMENT_COPY), experimentText, StandardCharsets.UTF_8);
            RunFolder folder = new RunFolder(dir, lock, experimentLock);
            folder.ports = ports;
            folder.newExperimentDir = newExperimentDir;
            return folder;
        } catch (IOException | Refused | RuntimeException failed) {
            // A folder that --resume would refuse (a full disk, no experiment.yaml) must not be left behind.
            if (created) {
                remove(dir, newExperimentDir);
            }
            if (lock != null) {
                lock.close();
            }
            if (ports != null) {
                ports.close();
            }
            experimentLock.close();
            throw failed;
        }
    }

    /**
     * Removes this new run's folder (and its experiment's folder, when this run made it and nothing else is in
     * it): a run that could not save its first results leaves nothing that {@code --resume} would refuse
     * (docs/experiment-file.md#checked-on-the-machine-before-the-first-launch). Call it before {@link #close()}.
     */
    public void discard() {
        remove(dir, newExperimentDir);
    }

    private static void remove(Path dir, boolean withExperimentDir) {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // What cannot be removed stays; the message that follows names the folder.
                }
            });
            if (withExperimentDir) {
                Files.deleteIfExists(dir.getParent());
            }
        } catch (IOException | java.io.UncheckedIOException ignored) {
            // As above: a folder not empty (another run's) or not removable stays.
        }
    }

    // The real path of a folder that may not exist yet: that of its nearest existing parent, with the rest added.
    private static Path realPath(Path p) throws IOException {
        Path absolute = p.toAbsolutePath().normalize();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        return existing == null ? absolute : existing.toRealPath().resolve(existing.relativize(absolute));
    }

    /** Whether {@code dir} holds what a run writes: the experiment as run and its results. */
    public static boolean isRunFolder(Path dir) {
        return Files.isRegularFile(dir.resolve(EXPERIMENT_COPY)) && Files.isRegularFile(dir.resolve(ResultFiles.NAME));
    }

    /**
     * An earlier run's folder, to finish it: it must hold the experiment and results a run writes, and no live
     * run may hold it. Servers its killed run left are stopped (each reported to {@code notices}).
     */
    public static RunFolder resume(Path dir, List<String> notices) throws IOException, Refused {
        if (!isRunFolder(dir)) {
            throw new Refused(dir + " is not a ctxprobe run folder (it needs " + EXPERIMENT_COPY + " and "
                    + ResultFiles.NAME + "); give the folder a run printed, e.g. results/demo/20260708-143534");
        }
        RunLock lock = RunLock.tryAcquire(dir);
        if (lock == null) {
            throw new Refused("another ctxprobe is running in " + dir + "; wait for it or stop it first");
        }
        RunLock experimentLock;
        try {
            Path experimentDir = dir.toAbsolutePath().getParent();
            experimentLock =
                    lockExperiment(experimentDir, experimentDir.getFileName().toString(), dir);
        } catch (IOException | Refused failed) {
            lock.close();
            throw failed;
        }
        RunFolder folder = new RunFolder(dir, lock, experimentLock);
        notices.addAll(Launchers.stopLeftovers(folder.ledger, LEFTOVER_WAIT));
        return folder;
    }

    /**
     * The experiment this folder's run was started with, as it ran: with the strategy and the backends its results
     * record, so that {@code --resume} continues what {@code --strategy} and {@code --backend} chose.
     */
    public Experiment experiment() throws ExperimentError, IOException, Refused {
        Path copy = dir.resolve(EXPERIMENT_COPY);
        if (Files.size(copy) > ExperimentLoader.MAX_FILE_BYTES) {
            throw new Refused(copy + ": " + ExperimentLoader.tooLarge(Files.size(copy)));
        }
        String text = Files.readString(copy, StandardCharsets.UTF_8);
        // The copy never holds a secret written literally (docs/experiment-file.md#secrets): launching with the
        // mask in its place would fail every step, so the user puts it back, best as {env:NAME}.
        if (text.contains(Redactor.MASK)) {
            throw new Refused(copy + " holds " + Redactor.MASK + " where the experiment wrote a secret (a key in a"
                    + " command or an env value), which a run folder never keeps: put {env:NAME} in its place, NAME"
                    + " a variable of ctxprobe's environment that holds the secret, then resume again");
        }
        Experiment e = Experiments.loader().parse(copy, text);
        ResultDocument doc = results();
        try {
            if (doc.config().get("strategy") instanceof String s) {
                e = e.withStrategy(Experiment.Strategy.of(s));
            }
            String backends = doc.metadata().backend();
            if (backends != null && !backends.isBlank()) {
                e = e.withBackends(List.of(backends.split("\\+")));
            }
        } catch (IllegalArgumentException mismatch) {
            throw new Refused("the results in " + dir + " do not fit its " + EXPERIMENT_COPY + " ("
                    + mismatch.getMessage() + "); restore the folder or start a new run");
        }
        return e;
    }

    /** The results so far, for --resume, checked as a report checks them. */
    public ResultDocument results() throws Refused {
        try {
            return ResultFiles.read(resultsFile());
        } catch (ResultFiles.ResultFileException e) {
            throw new Refused(e.getMessage() + "\nresume needs a whole results file: correct it, or start a new run");
        }
    }

    /**
     * {@code logs/<backend>_ctx_<target>.log}, with {@code _n<concurrency>} for concurrent requests; a relaunch for
     * the same point (restart: on_failure after a crash, --resume) gets {@code .2}, {@code .3}: it must not
     * overwrite the log an earlier step's evidence points to.
     */
    @Override
    public String fresh(Point point) {
        String stem = "logs/" + point.backend() + "_ctx_" + point.target()
                + (point.concurrency() == 1 ? "" : "_n" + point.concurrency());
        String name = stem + ".log";
        for (int n = 2; Files.exists(dir.resolve(name)); n++) {
            name = stem + "." + n + ".log";
        }
        return name;
    }

    @Override
    public Path dir() {
        return dir;
    }

    public Path resultsFile() {
        return dir.resolve(ResultFiles.NAME);
    }

    public Ledger ledger() {
        return ledger;
    }

    /** Writes {@code report.html} from the saved results and returns its path. */
    public Path writeReport() throws IOException {
        // The heap grown for the prompts' bodies is given back (the script's free ratios) before the report loads
        // its fonts and charts, so the process's peak memory is the larger of the two, not their sum.
        System.gc();
        return Reports.writeHtml(dir);
    }

    // A run killed with SIGKILL leaves its servers file behind; its servers would hold the port and the memory.
    private static List<String> stopLeftoversOfEarlierRuns(Path experimentDir) throws IOException {
        List<String> notices = new ArrayList<>();
        if (!Files.isDirectory(experimentDir)) {
            return notices;
        }
        try (DirectoryStream<Path> runs = Files.newDirectoryStream(experimentDir, Files::isDirectory)) {
            for (Path run : runs) {
                if (!Files.exists(run.resolve(Ledger.NAME))) {
                    continue;
                }
                // A folder whose lock is held belongs to a run that is still going: its servers are not leftovers.
                try (RunLock held = RunLock.tryAcquire(run)) {
                    if (held != null) {
                        notices.addAll(Launchers.stopLeftovers(new Ledger(run), LEFTOVER_WAIT));
                    }
                }
            }
        }
        return notices;
    }

    /** Ends the run's hold: the servers file goes when it names no server, the lock file goes with the lock. */
    @Override
    public void close() throws IOException {
        try {
            try {
                ledger.removeIfEmpty();
            } finally {
                lock.closeAndRemove();
            }
        } finally {
            if (ports != null) {
                ports.close();
            }
            experimentLock.close();
        }
    }
}
