package dev.ctxprobe.launch.slurm;

import dev.ctxprobe.hardware.CommandResult;
import dev.ctxprobe.launch.Endpoint;
import dev.ctxprobe.launch.HealthProbe;
import dev.ctxprobe.launch.LaunchContext;
import dev.ctxprobe.launch.LaunchException;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.LauncherProvider;
import dev.ctxprobe.launch.Ledger;
import dev.ctxprobe.launch.Ports;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Refusal;
import dev.ctxprobe.launch.SelfCommand;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs each step's server as one Slurm job: {@code sbatch} submits a batch script whose engine is one {@code srun}
 * step (one task per node, see {@link BatchScript}), with its output in the step's log in the run folder, which the
 * nodes must share. The job's state comes from {@code scontrol show job}, polled by a watcher per job that keeps the
 * last state it saw: the controller forgets a job MinJobAge after its end, and there may be no accounting to ask.
 *
 * <p>Readiness waits for the job to run (bounded by the queue time, never by the startup time), asks Slurm for its
 * node, then polls the engine's readiness path there. A stop is {@code scancel} (TERM, then KILL after the cluster's
 * KillWait), a KILL to every step after the shutdown time, and a wait until Slurm reports the job ended: under
 * {@code proctrack/cgroup} that means every process of it is gone, a daemon that left the engine's session included.
 */
public final class SlurmLauncher implements Launcher {
    /** The kind experiments name it by. */
    public static final String KIND = "slurm";

    /** How often a job's state is asked while it waits, starts or stops; a serving job is asked every second. */
    static final Duration POLL = Duration.ofMillis(250);

    private static final Duration POLL_SERVING = Duration.ofSeconds(1);
    private static final Duration EXIT_NOTICE = Duration.ofSeconds(8);
    private static final Duration READINESS_POLL = Duration.ofMillis(100);
    /** Slurm's default KillWait, for a cluster whose configuration cannot be read. */
    private static final Duration DEFAULT_KILL_WAIT = Duration.ofSeconds(30);
    /** After KILL, a job may stay COMPLETING while its node cleans up (epilog); this long at most. */
    private static final Duration AFTER_KILL = Duration.ofSeconds(120);

    private final Ledger ledger;
    private final Path runDir;
    private final SlurmOptions options;
    /** Finds the secrets the batch scripts must not hold (docs/slurm.md#secrets). */
    private final Redactor redactor;

    private final Set<Job> live = ConcurrentHashMap.newKeySet();
    private volatile Duration killWait;

    SlurmLauncher(Ledger ledger, Path runDir, SlurmOptions options, Redactor redactor) {
        this.ledger = ledger;
        this.runDir = runDir;
        this.options = options;
        this.redactor = redactor;
    }

    /** Nothing to check on this machine: ports and accelerators are on the node the cluster chooses. */
    @Override
    public Optional<Refusal> preflight(LaunchSpec spec) {
        return Optional.empty();
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) throws LaunchException {
        String name = "ctxprobe-" + runDir.getFileName() + "-" + spec.name();
        Path log = spec.logFile().toAbsolutePath();
        Path script = Path.of(stem(log) + ".sbatch.sh");
        Path batchLog = Path.of(stem(log) + ".slurm.log");
        List<String> argv = SelfCommand.expand(spec.argv());
        BatchScript.Written batch = BatchScript.of(name, argv, spec.env(), log, Ports.free(), redactor);
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(script, batch.text(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new LaunchException(
                    new Refusal(
                            FailureClass.SUBMIT_REJECTED,
                            "the batch script could not be written (" + e.getMessage() + "); check the run folder",
                            List.of(String.valueOf(e.getMessage()))),
                    e);
        }
        List<String> sbatch = new ArrayList<>(
                List.of("sbatch", "--parsable", "--job-name=" + name, "--output=" + batchLog, "--no-requeue"));
        sbatch.addAll(options.sbatchArgs());
        sbatch.add(script.toString());
        long submitted = System.nanoTime();
        // The secrets travel in sbatch's environment, which the job inherits (--export=ALL, sbatch's default).
        CommandResult r = Slurm.run(sbatch, batch.secrets());
        String id = r.succeeded() ? r.stdout().strip().split(";")[0] : "";
        if (!id.matches("\\d+")) {
            throw new LaunchException(rejected(r), null);
        }
        Ledger.Entry entry = new Ledger.Entry(KIND, List.of(id, name));
        ledger.add(entry);
        Job job = new Job(spec, id, name, batchLog, entry, submitted);
        live.add(job);
        Thread.ofVirtual().name("slurm-job-" + id).start(job::watch);
        return job;
    }

    private static Refusal rejected(CommandResult r) {
        List<String> evidence = new ArrayList<>();
        evidence.add("$ " + String.join(" ", r.command()));
        if (r.problem() != null) {
            evidence.add(r.problem());
        } else {
            (r.stderr() + r.stdout()).lines().filter(l -> !l.isBlank()).limit(8).forEach(evidence::add);
        }
        String said = r.problem() != null
                ? r.problem()
                : (r.stderr() + r.stdout())
                        .lines()
                        .filter(l -> !l.isBlank())
                        .findFirst()
                        .orElse("exit code " + r.exitCode());
        String advice = r.absent()
                ? "run ctxprobe where Slurm's commands are installed (a login node)"
                : "fix the launcher option it names";
        return new Refusal(FailureClass.SUBMIT_REJECTED, "sbatch refused the job (" + said + "); " + advice, evidence);
    }

    private static String stem(Path log) {
        String s = log.toString();
        return s.endsWith(".log") ? s.substring(0, s.length() - 4) : s;
    }

    private Duration killWait() {
        if (killWait == null) {
            killWait = Slurm.killWait().orElse(DEFAULT_KILL_WAIT);
        }
        return killWait;
    }

    /**
     * Cancels every job of this launcher that is still live: each is stopped by its step, so this finds one only
     * when a step broke off, and a job must never outlive its run.
     */
    @Override
    public void close() {
        for (Job job : List.copyOf(live)) {
            job.stop();
        }
    }

    /** One step's job, watched from submit to its end. */
    private final class Job implements ServerHandle {
        private final LaunchSpec spec;
        private final String id;
        private final String name;
        private final Path batchLog;
        private final Ledger.Entry entry;
        private final long submittedNanos;
        /** Completed by the watcher with how the job ended, once Slurm reports it ended (or forgets it). */
        private final CompletableFuture<Termination> ended = new CompletableFuture<>();
        /**
         * Completed as soon as the engine has ended: when the job is COMPLETING without ctxprobe's cancel (its
         * processes may still be cleaned up), else with {@link #ended}. A crash is judged on this, seconds earlier.
         */
        private final CompletableFuture<Termination> exited = new CompletableFuture<>();

        private final Object wake = new Object();
        private volatile JobInfo last;

        /** When the watcher first saw the job in a state it cannot start from; -1 while it has not. */
        private volatile long neverStartsSince = -1;
        /** Why the controller did not answer the last question, while it does not. */
        private volatile String unanswered;

        private volatile long runningNanos = -1;
        private volatile long endedNanos = -1;
        private volatile String nodeAddress;
        private volatile boolean serving;
        private volatile boolean stopRequested;
        private volatile boolean hurry;
        /** The stop gave up on Slurm's word (its controller did not answer): the ledger keeps the job for later. */
        private volatile boolean abandoned;

        private StopReport stopped;

        Job(LaunchSpec spec, String id, String name, Path batchLog, Ledger.Entry entry, long submittedNanos) {
            this.spec = spec;
            this.id = id;
            this.name = name;
            this.batchLog = batchLog;
            this.entry = entry;
            this.submittedNanos = submittedNanos;
        }

        /** The watcher: asks Slurm for the job until it has ended, keeping the last state seen. */
        void watch() {
            while (!ended.isDone() && !abandoned) {
                Slurm.Answer a = Slurm.job(id);
                if (a.job() != null) {
                    JobInfo j = a.job();
                    if (neverStartsSince < 0 && j.neverStarts() != null) {
                        neverStartsSince = System.nanoTime();
                    }
                    last = j;
                    unanswered = null;
                    if (runningNanos < 0 && !j.waiting() && !(j.ended() && j.batchHost() == null)) {
                        nodeAddress = j.batchHost() == null ? null : Slurm.address(j.batchHost());
                        runningNanos = System.nanoTime();
                    }
                    if (j.ended()) {
                        finish(j.termination(stopRequested));
                        return;
                    }
                    if (j.state().equals("COMPLETING") && !stopRequested && !exited.isDone()) {
                        exited.complete(j.termination(false));
                    }
                } else if (a.gone()) {
                    finish(new Termination(
                            null,
                            null,
                            Ended.Reason.UNKNOWN,
                            "Slurm job " + id + " left the controller before ctxprobe saw how it ended"
                                    + (last == null ? "" : "; last seen " + last.describe())));
                    return;
                } else {
                    // The controller did not answer this time; the job is whatever it was, ask again.
                    unanswered = a.problem();
                }
                pause(serving && !stopRequested && !hurry ? POLL_SERVING : POLL);
            }
        }

        private void pause(Duration d) {
            synchronized (wake) {
                try {
                    wake.wait(d.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Asks Slurm again now and keep asking often: someone waits for the end. */
        private void hurry() {
            hurry = true;
            synchronized (wake) {
                wake.notifyAll();
            }
        }

        private void finish(Termination how) {
            endedNanos = System.nanoTime();
            List<String> notes = new ArrayList<>();
            if (runningNanos >= 0 && !Files.exists(spec.logFile())) {
                notes.add("its log " + spec.logFile() + " never appeared on this machine: the run folder must be on a"
                        + " filesystem the nodes share (see docs/slurm.md)");
            }
            notes.addAll(slurmErrors());
            String detail = how.detail();
            if (!notes.isEmpty()) {
                detail = detail + "; " + String.join("; ", notes);
            }
            live.remove(this);
            Termination t = new Termination(how.exitCode(), how.signal(), how.reason(), detail);
            ended.complete(t);
            exited.complete(t);
        }

        // What srun and slurmstepd said of the step's end ("task 0: Out Of Memory"), two lines at most.
        private List<String> slurmErrors() {
            try {
                return Files.readAllLines(batchLog, StandardCharsets.UTF_8).stream()
                        .map(String::strip)
                        .filter(l -> l.startsWith("srun: error:") || l.startsWith("slurmstepd"))
                        .filter(l -> !l.contains("CANCELLED AT"))
                        .limit(2)
                        .toList();
            } catch (IOException notThere) {
                return List.of();
            }
        }

        @Override
        public String id() {
            return KIND + ":" + id;
        }

        @Override
        public Endpoint endpoint() {
            String host = nodeAddress;
            return new Endpoint(host == null ? Ports.connectHost(spec.host()) : endpointHost(host), spec.port());
        }

        // The engine listens on the node: bound to a wildcard or loopback it is reached at the node's address,
        // bound to an address of its own, there.
        private String endpointHost(String node) {
            String bound = spec.host();
            boolean anyOrLoopback = bound.isEmpty()
                    || bound.equals("0.0.0.0")
                    || bound.equals("::")
                    || bound.equals("localhost")
                    || bound.startsWith("127.")
                    || bound.equals("::1");
            return anyOrLoopback ? node : bound;
        }

        @Override
        public Path log() {
            return spec.logFile();
        }

        @Override
        public Duration queued() {
            long now = System.nanoTime();
            long until = runningNanos >= 0 ? runningNanos : endedNanos >= 0 ? endedNanos : now;
            return Duration.ofNanos(until - submittedNanos);
        }

        @Override
        public Readiness awaitReady() throws InterruptedException {
            URI uri = null;
            String lastAnswer = "no answer yet";
            while (true) {
                if (ended.isDone()) {
                    return new Readiness.Exited(sinceStart(), ended.join());
                }
                long running = runningNanos;
                JobInfo seen = last;
                if (running < 0 && seen != null && seen.neverStarts() != null) {
                    return new Readiness.Refused(
                            queued(),
                            new Refusal(
                                    seen.neverStarts(),
                                    "the cluster holds the job where it cannot start without someone's action ("
                                            + seen.state() + ", reason " + seen.reason() + "); "
                                            + (seen.neverStarts() == FailureClass.SUBMIT_REJECTED
                                                    ? "check launcher.account and launcher.qos"
                                                    : "release it (scontrol release " + id + ") or see 'scontrol"
                                                            + " show job " + id + "'; it was cancelled")
                                            + " (this says nothing about length)",
                                    List.of("job state " + seen.state() + ", reason " + seen.reason())),
                            Duration.ofNanos(System.nanoTime() - neverStartsSince));
                }
                if (running < 0) {
                    if (System.nanoTime() - submittedNanos > spec.queueTimeout().toNanos()) {
                        JobInfo j = last;
                        return j != null
                                ? new Readiness.Queued(queued(), j.state(), j.reason())
                                : new Readiness.Queued(queued(), "UNKNOWN", "Slurm did not answer: " + unanswered);
                    }
                    Thread.sleep(READINESS_POLL.toMillis());
                    continue;
                }
                if (uri == null) {
                    uri = URI.create(endpoint().baseUrl() + spec.readinessPath());
                }
                int status = HealthProbe.status(uri);
                if (status == 200) {
                    serving = true;
                    return new Readiness.Ready(sinceStart(), "GET " + spec.readinessPath() + " 200");
                }
                lastAnswer = status < 0 ? "connection refused" : "HTTP " + status;
                if (System.nanoTime() - running > spec.startupTimeout().toNanos()) {
                    return new Readiness.TimedOut(sinceStart(), lastAnswer + " from " + endpoint());
                }
                Thread.sleep(READINESS_POLL.toMillis());
            }
        }

        /** Time since the job started to run (since its submit when it never ran): the startup, not the queue. */
        private Duration sinceStart() {
            long from = runningNanos >= 0 ? runningNanos : submittedNanos;
            return Duration.ofNanos(System.nanoTime() - from);
        }

        @Override
        public boolean isAlive() {
            return !exited.isDone();
        }

        /**
         * From a crash to the job's end Slurm takes seconds even on an idle node (the fixtures' README has the times),
         * more under load; its watcher asks every second while the job serves.
         */
        @Override
        public Duration exitNoticeDelay() {
            return EXIT_NOTICE;
        }

        /** Waits for Slurm's final word up to {@code limit}, else takes what a COMPLETING job already tells. */
        @Override
        public Optional<Termination> awaitExit(Duration limit) throws InterruptedException {
            hurry();
            try {
                return Optional.of(ended.get(limit.toNanos(), TimeUnit.NANOSECONDS));
            } catch (TimeoutException notFinalYet) {
                return termination();
            } catch (ExecutionException neverExceptional) {
                return termination();
            }
        }

        @Override
        public Optional<Termination> termination() {
            Termination known = ended.getNow(null);
            return Optional.ofNullable(known != null ? known : exited.getNow(null));
        }

        @Override
        public synchronized StopReport stop() {
            if (stopped != null) {
                return stopped;
            }
            long t0 = System.nanoTime();
            boolean endedByItself = ended.isDone();
            boolean killed = false;
            if (!endedByItself) {
                stopRequested = true;
                Slurm.cancel(id);
                hurry();
                // A second Ctrl-C (an interrupt now) cuts the wait for TERM short and KILLs at once; the wait for
                // the end after the KILL runs in full, and the interrupt is kept for the run.
                if (!awaitEnd(spec.shutdownTimeout(), true)) {
                    Slurm.kill(id);
                    killed = true;
                    awaitEnd(AFTER_KILL, false);
                }
            }
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            Termination how = ended.getNow(null);
            if (how != null) {
                ledger.remove(entry);
            } else {
                abandoned = true;
            }
            live.remove(this);
            // Slurm sends KILL itself at KillWait; a job that ended before then left on TERM.
            boolean clean = endedByItself || (how != null && !killed && took.compareTo(killWait()) < 0);
            stopped = new StopReport(clean && how != null, List.of(), how, took, null);
            return stopped;
        }

        /**
         * Waits up to {@code limit} for the job to end; an interrupt ends the wait early only when {@code
         * interruptible} (and is then kept for the caller), else it is kept and the wait goes on.
         */
        private boolean awaitEnd(Duration limit, boolean interruptible) {
            boolean interrupted = Thread.interrupted();
            try {
                if (interrupted && interruptible) {
                    return ended.isDone();
                }
                long deadline = System.nanoTime() + limit.toNanos();
                while (true) {
                    try {
                        ended.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                        return true;
                    } catch (InterruptedException e) {
                        interrupted = true;
                        if (interruptible) {
                            return ended.isDone();
                        }
                    } catch (TimeoutException e) {
                        return false;
                    } catch (ExecutionException e) {
                        // Never completed exceptionally; an end is an end.
                        return true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public String toString() {
            return name + " (Slurm job " + id + ")";
        }
    }

    /** The kind {@code slurm}: its options, its launchers, and the jobs a killed run left in its ledger. */
    public static final class Provider implements LauncherProvider {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Map<String, String> check(Map<String, Object> options) {
            return SlurmOptions.check(options);
        }

        @Override
        public Launcher create(LaunchContext context, Map<String, Object> options) {
            return new SlurmLauncher(context.ledger(), context.runDir(), SlurmOptions.of(options), context.redactor());
        }

        @Override
        public List<String> optionNames() {
            return SlurmOptions.NAMES;
        }

        @Override
        public Set<String> placeholders() {
            return new LinkedHashSet<>(BatchScript.PLACEHOLDERS);
        }

        /** Cancels a job the ledger names if Slurm still holds it live under the same name (else it is not ours). */
        @Override
        public Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait) {
            List<String> f = entry.fields();
            if (f.size() != 2 || !f.getFirst().matches("\\d+")) {
                return Optional.empty();
            }
            String id = f.get(0);
            String name = f.get(1);
            Slurm.Answer a = Slurm.job(id);
            if (a.gone()
                    || (a.job() != null
                            && (!a.job().name().equals(name) || a.job().ended()))) {
                return Optional.empty();
            }
            if (a.job() == null) {
                return Optional.of(new Leftover(
                        "cannot ask Slurm about job " + id + " (" + name + ") that a killed run left (" + a.problem()
                                + "); it stays listed, cancel it by hand if it still runs",
                        false));
            }
            String was = a.job().describe();
            Slurm.cancel(id);
            boolean gone = awaitGone(id, wait);
            if (!gone) {
                Slurm.kill(id);
                gone = awaitGone(id, AFTER_KILL);
            }
            return Optional.of(new Leftover(
                    "cancelled leftover Slurm job " + id + " (" + name + ", " + was + ")"
                            + (gone ? "" : "; it has not ended yet, cancel it by hand"),
                    gone));
        }

        private static boolean awaitGone(String id, Duration limit) {
            long deadline = System.nanoTime() + limit.toNanos();
            while (true) {
                Slurm.Answer a = Slurm.job(id);
                if (a.gone() || (a.job() != null && a.job().ended())) {
                    return true;
                }
                if (System.nanoTime() > deadline) {
                    return false;
                }
                try {
                    Thread.sleep(POLL.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }
}
