package dev.ctxprobe.launch;

import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Starts each server on this machine as the leader of a new session and process group ({@code setsid}), with its
 * output copied into a log file (secrets masked, size capped), and stops it by signalling the whole group and every
 * process that carries the launch's mark ({@link LaunchProcesses}): engines spawn workers that outlive their parent
 * (vLLM's EngineCore, SGLang's scheduler), and a worker or a wrapper script may leave the group or daemonize. A
 * server gets the environment {@link ServerEnvironment} builds, not all of ctxprobe's. Before a launch the port must
 * be free and the accelerator memory back at the run's baseline.
 */
public final class LocalLauncher implements Launcher {
    /** The kind experiments name it by; the default. */
    public static final String KIND = "local";

    /** Readiness is polled at most this far apart. */
    static final Duration POLL = Duration.ofMillis(100);

    /**
     * How often readiness is polled in the first {@link #FAST_WINDOW} of a launch and for {@link #HINT_WINDOW} after a
     * ready line: a server that comes up quickly, or has just said it is up, is seen within a few ms of answering,
     * not up to a whole {@link #POLL} later. A refused connect costs well under a millisecond.
     */
    static final Duration FAST_POLL = Duration.ofMillis(10);

    /** How long after its start a server is polled every {@link #FAST_POLL}. */
    public static final Duration FAST_WINDOW = Duration.ofSeconds(5);

    /** uvicorn prints its "startup complete" a moment before it binds, so one probe at the line may be too early. */
    static final Duration HINT_WINDOW = Duration.ofSeconds(2);

    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private static final int SIGKILL = 9;

    /** How long the log may take to catch up with a server that has ended before it is read. */
    private static final Duration LOG_SETTLE = Duration.ofSeconds(2);

    private static final SecureRandom NONCES = new SecureRandom();

    private final Ledger ledger;
    private final GpuHygiene gpu;
    private final String runTag;
    private final Redactor redactor;
    private final List<String> passEnv;
    private final long logCap;

    /**
     * A launcher with the default rules: nothing masked, nothing passed beyond the allow-list, 64 MiB logs.
     *
     * @param ledger where live groups are recorded, or null to record nowhere
     * @param hardware the accelerator queries behind the memory checks, or null for none
     */
    public LocalLauncher(Ledger ledger, HardwareProbe hardware) {
        this(new LaunchContext(Path.of("ctxprobe"), ledger, hardware));
    }

    /** A launcher for the run of {@code context}: its ledger, accelerators, secrets, pass_env and log cap. */
    public LocalLauncher(LaunchContext context) {
        this.ledger = context.ledger();
        this.gpu = context.hardware() == null ? null : new GpuHygiene(context.hardware());
        Path name = context.runDir().getFileName();
        this.runTag = name == null ? "ctxprobe" : name.toString().replaceAll("[^A-Za-z0-9._-]", "_");
        this.redactor = context.redactor();
        this.passEnv = context.passEnv();
        this.logCap = context.serverLogBytes();
    }

    @Override
    public Optional<Refusal> preflight(LaunchSpec spec) throws InterruptedException {
        if (Ports.busy(spec.host(), spec.port())) {
            return Optional.of(new Refusal(
                    FailureClass.PORT_BUSY,
                    "port " + spec.port() + " on " + spec.host()
                            + " is already taken by another process; stop it (a stale server?) or choose another port",
                    List.of("connect to " + Ports.connectHost(spec.host()) + ":" + spec.port()
                            + " succeeded before launch")));
        }
        return gpu == null ? Optional.empty() : gpu.preflight(spec.env(), spec.shutdownTimeout());
    }

    /**
     * On a machine with accelerators, two servers may run together only on devices of their own; on a CPU machine
     * (no accelerator query answers) they share the cores and run together (docs/experiment-file.md, backends).
     */
    @Override
    public boolean canRunTogether(Map<String, String> env, Map<String, String> otherEnv) {
        return gpu == null || !gpu.watchesAccelerators() || GpuHygiene.disjoint(env, otherEnv);
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) throws LaunchException {
        List<String> argv = new ArrayList<>();
        argv.add("setsid");
        argv.addAll(SelfCommand.expand(spec.argv()));
        String mark = runTag + "." + spec.name() + "." + HexFormat.of().formatHex(nonce());
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().clear();
        pb.environment().putAll(ServerEnvironment.of(System.getenv(), passEnv, spec.env(), mark));
        List<Long> memoryBefore = gpu == null ? null : gpu.usedMiB();
        // Recorded before it starts, by its mark alone: a ctxprobe killed between the start and the record must not
        // leave a server that no servers file names.
        Ledger.Entry pending = null;
        if (ledger != null) {
            pending = new Ledger.Entry(
                    KIND,
                    List.of(
                            "-1",
                            Long.toString(ProcessGroups.startTicks(
                                    ProcessHandle.current().pid())),
                            ProcessGroups.bootId(),
                            mark));
            ledger.add(pending);
        }
        long started = System.nanoTime();
        Process process;
        LogCopier log;
        try {
            Files.createDirectories(spec.logFile().getParent());
            log = new LogCopier(spec.logFile(), logCap, redactor, spec.name());
            log.open();
            process = pb.start();
        } catch (IOException e) {
            if (pending != null) {
                ledger.remove(pending);
            }
            throw new LaunchException(
                    new Refusal(
                            FailureClass.STARTUP_CRASH,
                            "the command could not be started (" + e.getMessage() + "); check that '"
                                    + spec.argv().getFirst() + "' is installed and on PATH",
                            List.of(String.valueOf(e.getMessage()))),
                    e);
        }
        log.start(process.getInputStream());
        Ledger.Entry entry = null;
        if (ledger != null) {
            entry = entryOf(process.pid(), mark);
            try {
                ledger.replace(pending, entry);
            } catch (UncheckedIOException notRecorded) {
                // The line written before the start still finds every process of the launch by its mark.
            }
        }
        try {
            awaitOwnGroup(process);
        } catch (IOException e) {
            throw new LaunchException(
                    new Refusal(FailureClass.STARTUP_CRASH, e.getMessage(), List.of(e.getMessage())), e);
        }
        return new LocalServer(spec, process, started, entry, memoryBefore, mark, log);
    }

    private static byte[] nonce() {
        byte[] b = new byte[6];
        NONCES.nextBytes(b);
        return b;
    }

    private static Ledger.Entry entryOf(long pgid, String mark) {
        return new Ledger.Entry(
                KIND,
                List.of(
                        Long.toString(pgid),
                        Long.toString(ProcessGroups.startTicks(pgid)),
                        ProcessGroups.bootId(),
                        mark));
    }

    // Until setsid has run, the child is still in ctxprobe's group and a group signal would miss it. A Ctrl-C
    // must not cut this wait short: the stop that follows would find no group and leave the server running.
    private static void awaitOwnGroup(Process process) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        boolean interrupted = Thread.interrupted();
        try {
            while (process.isAlive() && ProcessGroups.groupOf(process.pid()) != process.pid()) {
                if (System.nanoTime() > deadline) {
                    process.destroyForcibly();
                    throw new IOException(
                            "the server did not become the leader of its own process group (is setsid installed?)");
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The live processes of a recorded launch, or none when they are gone or the ids now belong to someone else: the
     * machine rebooted, or the leader's pid was reused by a later process. With the leader gone, its workers keep the
     * group id and the mark; anything older than the leader is not one of them.
     *
     * @param mark the launch's mark, or null for an entry written before launches were marked
     */
    static List<Long> liveMembers(long pgid, long startTicks, String bootId, String mark) {
        if (!bootId.equals(ProcessGroups.bootId())) {
            return List.of();
        }
        long leaderStart = ProcessGroups.startTicks(pgid);
        if (leaderStart >= 0 && leaderStart != startTicks) {
            return List.of();
        }
        return new LaunchProcesses(pgid, startTicks, mark).alive();
    }

    /** The built-in kind {@code local}; it takes no options. */
    static final class Provider implements LauncherProvider {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Launcher create(LaunchContext context, Map<String, Object> options) {
            return new LocalLauncher(context);
        }

        @Override
        public Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait) {
            List<String> f = entry.fields();
            if ((f.size() != 3 && f.size() != 4)
                    || !f.get(0).matches("-?\\d+")
                    || !f.get(1).matches("-?\\d+")) {
                return Optional.empty();
            }
            long pgid = Long.parseLong(f.get(0));
            long start = Long.parseLong(f.get(1));
            String mark = f.size() == 4 ? f.get(3) : null;
            if (pgid <= 1 && mark == null) {
                return Optional.empty();
            }
            List<Long> members = liveMembers(pgid, start, f.get(2), mark);
            if (members.isEmpty()) {
                return Optional.empty();
            }
            LaunchProcesses.Stopped stopped = new LaunchProcesses(pgid, start, mark).stop(wait, KILL_WAIT);
            List<Long> left = stopped.left();
            return Optional.of(new Leftover(
                    (pgid > 1 ? "stopped leftover server group " + pgid + " " : "stopped leftover server processes ")
                            + members
                            + (stopped.outsideGroup().isEmpty()
                                    ? ""
                                    : " (outside its group: " + stopped.outsideGroup() + ")")
                            + (left.isEmpty() ? "" : "; still alive after KILL: " + left),
                    left.isEmpty()));
        }
    }

    private final class LocalServer implements ServerHandle {
        private final LaunchSpec spec;
        private final Process process;
        private final long startedNanos;
        private final Ledger.Entry entry;
        private final List<Long> memoryBefore;
        private final Endpoint endpoint;
        private final LaunchProcesses processes;
        private final LogCopier log;
        private StopReport stopped;
        /** The OOM killer's count when the server started, to tell its SIGKILL from an operator's. */
        private final Long oomKillsAtStart = OomKills.count();

        /** Set by a ready line in the log or the server's exit, while {@link #awaitReady()} waits between polls. */
        private final Object wakeLock = new Object();

        private boolean woken;

        LocalServer(
                LaunchSpec spec,
                Process process,
                long startedNanos,
                Ledger.Entry entry,
                List<Long> memoryBefore,
                String mark,
                LogCopier log) {
            this.spec = spec;
            this.process = process;
            this.startedNanos = startedNanos;
            this.entry = entry;
            this.memoryBefore = memoryBefore;
            this.endpoint = new Endpoint(Ports.connectHost(spec.host()), spec.port());
            this.processes = new LaunchProcesses(process.pid(), ProcessGroups.startTicks(process.pid()), mark);
            this.log = log;
        }

        @Override
        public String id() {
            return KIND + ":" + process.pid();
        }

        @Override
        public Endpoint endpoint() {
            return endpoint;
        }

        @Override
        public Path log() {
            return spec.logFile();
        }

        @Override
        public Long pid() {
            return process.pid();
        }

        @Override
        public List<Long> memoryBeforeMib() {
            return memoryBefore;
        }

        @Override
        public Readiness awaitReady() throws InterruptedException {
            URI uri = URI.create(endpoint.baseUrl() + spec.readinessPath());
            long deadline = startedNanos + spec.startupTimeout().toNanos();
            long fastUntil = startedNanos + FAST_WINDOW.toNanos();
            String last = null;
            log.watchReadyLines(new ReadyLines(spec.readyLines()), this::wake);
            // Waiting for the next poll wakes up at once if the server exits meanwhile.
            process.onExit().thenRun(this::wake);
            try {
                while (true) {
                    if (!process.isAlive()) {
                        return exited();
                    }
                    if (deadline - System.nanoTime() <= 0) {
                        log.settle(POLL);
                        return timedOut(last);
                    }
                    HealthProbe.Answer answer = HealthProbe.probe(uri, deadline);
                    if (answer.status() == 200) {
                        log.settle(POLL);
                        return new Readiness.Ready(since(), "GET " + spec.readinessPath() + " 200");
                    }
                    // The last probe, cut short by the deadline, would hide what the server said before it.
                    if (last == null || !answer.cutShort()) {
                        last = answer.describe();
                    }
                    long now = System.nanoTime();
                    long left = deadline - now;
                    if (left <= 0) {
                        log.settle(POLL);
                        return timedOut(last);
                    }
                    long interval = (now - fastUntil < 0 ? FAST_POLL : POLL).toNanos();
                    if (awaitWake(Math.min(interval, left))) {
                        long hinted = System.nanoTime() + HINT_WINDOW.toNanos();
                        if (hinted - fastUntil > 0) {
                            fastUntil = hinted;
                        }
                    }
                }
            } finally {
                log.stopWatching();
            }
        }

        private Readiness.TimedOut timedOut(String last) {
            return new Readiness.TimedOut(since(), last == null ? "no answer yet" : last);
        }

        /** A ready line in the log, or the server's exit. */
        private void wake() {
            synchronized (wakeLock) {
                woken = true;
                wakeLock.notifyAll();
            }
        }

        /** Waits up to {@code nanos} for {@link #wake()}; true when it came (and is used up). */
        private boolean awaitWake(long nanos) throws InterruptedException {
            long until = System.nanoTime() + nanos;
            synchronized (wakeLock) {
                while (!woken) {
                    long left = until - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(wakeLock, left);
                }
                woken = false;
                return true;
            }
        }

        private Readiness exited() {
            log.drain(LOG_SETTLE);
            return new Readiness.Exited(since(), ended());
        }

        /** How the server ended by itself; a SIGKILL tells the OOM killer from an outside kill where it can. */
        private Termination ended() {
            Termination t = Termination.exited(process.exitValue());
            if (t.signal() == null || t.signal() != SIGKILL) {
                return t;
            }
            String cause = OomKills.sigkillCause(oomKillsAtStart, OomKills.count());
            if (cause == null) {
                return t;
            }
            return new Termination(
                    null,
                    SIGKILL,
                    cause.startsWith("the kernel's OOM killer") ? Ended.Reason.OUT_OF_MEMORY : Ended.Reason.EXITED,
                    cause);
        }

        private Duration since() {
            return Duration.ofNanos(System.nanoTime() - startedNanos);
        }

        @Override
        public boolean isAlive() {
            return process.isAlive();
        }

        @Override
        public Optional<Termination> awaitExit(Duration limit) throws InterruptedException {
            if (process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS)) {
                log.drain(LOG_SETTLE);
                return termination();
            }
            return Optional.empty();
        }

        @Override
        public Optional<Termination> termination() {
            if (stopped != null && stopped.ended() != null) {
                return Optional.of(stopped.ended());
            }
            return process.isAlive() ? Optional.empty() : Optional.of(ended());
        }

        @Override
        public synchronized StopReport stop() {
            if (stopped != null) {
                return stopped;
            }
            long t0 = System.nanoTime();
            // A leader that ended by itself ended for its own reasons, whatever its workers do now.
            boolean endedByItself = !process.isAlive();
            // A second Ctrl-C cuts the TERM wait short to KILL at once, but the KILL and the wait for every process
            // to leave still run in full, so the report keeps the exit code and counts no dying process as left.
            // The interrupt is kept for the run.
            LaunchProcesses.Stopped result = processes.stop(spec.shutdownTimeout(), KILL_WAIT);
            boolean interrupted = Thread.interrupted();
            try {
                process.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
            log.drain(LOG_SETTLE);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (result.left().isEmpty() && ledger != null) {
                try {
                    ledger.remove(entry);
                } catch (UncheckedIOException notWritten) {
                    // The line stays and names processes that are gone; the next look finds none of them alive.
                }
            }
            Termination ended = null;
            if (!process.isAlive()) {
                ended = endedByItself ? ended() : Termination.stopped(process.exitValue());
            }
            stopped = new StopReport(
                    result.clean(),
                    result.left(),
                    ended,
                    Duration.ofNanos(System.nanoTime() - t0),
                    gpu == null ? null : gpu.usedMiB(),
                    result.outsideGroup());
            return stopped;
        }
    }
}
