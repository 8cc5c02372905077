package dev.ctxprobe.launch;

import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.hardware.HardwareProbe;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Starts each server on this machine as the leader of a new session and process group ({@code setsid}), with its
 * output in a log file, and stops it by signalling the whole group: engines spawn workers that outlive their parent
 * (vLLM's EngineCore, SGLang's scheduler). Before a launch the port must be free and the accelerator memory back at
 * the run's baseline.
 */
public final class LocalLauncher implements Launcher {
    /** The kind experiments name it by; the default. */
    public static final String KIND = "local";

    /** Readiness is polled at most this far apart (at most every 250 ms). */
    static final Duration POLL = Duration.ofMillis(100);

    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private final Ledger ledger;
    private final GpuHygiene gpu;

    /**
     * @param ledger where live groups are recorded, or null to record nowhere
     * @param hardware the accelerator queries behind the memory checks, or null for none
     */
    public LocalLauncher(Ledger ledger, HardwareProbe hardware) {
        this.ledger = ledger;
        this.gpu = hardware == null ? null : new GpuHygiene(hardware);
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

    /** On a machine with accelerators, two servers may run together only on devices of their own. */
    @Override
    public boolean canRunTogether(Map<String, String> env, Map<String, String> otherEnv) {
        return gpu == null || GpuHygiene.disjoint(env, otherEnv);
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) throws LaunchException {
        List<String> argv = new ArrayList<>();
        argv.add("setsid");
        argv.addAll(SelfCommand.expand(spec.argv()));
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(spec.logFile().toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().putAll(spec.env());
        List<Long> memoryBefore = gpu == null ? null : gpu.usedMiB();
        long started = System.nanoTime();
        Process process;
        try {
            Files.createDirectories(spec.logFile().getParent());
            process = pb.start();
        } catch (IOException e) {
            throw new LaunchException(
                    new Refusal(
                            FailureClass.STARTUP_CRASH,
                            "the command could not be started (" + e.getMessage() + "); check that '"
                                    + spec.argv().getFirst() + "' is installed and on PATH",
                            List.of(String.valueOf(e.getMessage()))),
                    e);
        }
        Ledger.Entry entry = null;
        if (ledger != null) {
            entry = entryOf(process.pid());
            ledger.add(entry);
        }
        try {
            awaitOwnGroup(process);
        } catch (IOException e) {
            throw new LaunchException(
                    new Refusal(FailureClass.STARTUP_CRASH, e.getMessage(), List.of(e.getMessage())), e);
        }
        return new LocalServer(spec, process, started, entry, memoryBefore);
    }

    private static Ledger.Entry entryOf(long pgid) {
        return new Ledger.Entry(
                KIND,
                List.of(Long.toString(pgid), Long.toString(ProcessGroups.startTicks(pgid)), ProcessGroups.bootId()));
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
     * The live processes of a recorded group, or none when the group is gone or the ids now belong to someone else:
     * the machine rebooted, or the leader's pid was reused by a later process.
     */
    static List<Long> liveMembers(long pgid, long startTicks, String bootId) {
        if (!bootId.equals(ProcessGroups.bootId())) {
            return List.of();
        }
        long leaderStart = ProcessGroups.startTicks(pgid);
        if (leaderStart >= 0 && leaderStart != startTicks) {
            return List.of();
        }
        // With the leader gone, its workers keep the group id; anything older than the leader is not one of them.
        return ProcessGroups.members(pgid).stream()
                .filter(pid -> ProcessGroups.startTicks(pid) >= startTicks)
                .toList();
    }

    /** The built-in kind {@code local}; it takes no options. */
    static final class Provider implements LauncherProvider {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Map<String, String> check(Map<String, Object> options) {
            Map<String, String> problems = new java.util.LinkedHashMap<>();
            options.keySet().forEach(k -> problems.put(k, "the local launcher takes no options; remove '" + k + "'"));
            return problems;
        }

        @Override
        public Launcher create(LaunchContext context, Map<String, Object> options) {
            return new LocalLauncher(context.ledger(), context.hardware());
        }

        @Override
        public Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait) {
            List<String> f = entry.fields();
            if (f.size() != 3 || !f.get(0).matches("\\d+") || !f.get(1).matches("-?\\d+")) {
                return Optional.empty();
            }
            long pgid = Long.parseLong(f.get(0));
            long start = Long.parseLong(f.get(1));
            List<Long> members = liveMembers(pgid, start, f.get(2));
            if (members.isEmpty()) {
                return Optional.empty();
            }
            ProcessGroups.signal(pgid, "TERM");
            if (!ProcessGroups.awaitGone(pgid, wait)) {
                ProcessGroups.signal(pgid, "KILL");
                ProcessGroups.awaitGone(pgid, KILL_WAIT);
            }
            List<Long> left = liveMembers(pgid, start, f.get(2));
            return Optional.of(new Leftover(
                    "stopped leftover server group " + pgid + " " + members
                            + (left.isEmpty() ? "" : "; still alive after KILL: " + left),
                    left.isEmpty()));
        }

        @Override
        public List<String> optionNames() {
            return List.of();
        }
    }

    private final class LocalServer implements ServerHandle {
        private final LaunchSpec spec;
        private final Process process;
        private final long startedNanos;
        private final Ledger.Entry entry;
        private final List<Long> memoryBefore;
        private final Endpoint endpoint;
        private StopReport stopped;

        LocalServer(LaunchSpec spec, Process process, long startedNanos, Ledger.Entry entry, List<Long> memoryBefore) {
            this.spec = spec;
            this.process = process;
            this.startedNanos = startedNanos;
            this.entry = entry;
            this.memoryBefore = memoryBefore;
            this.endpoint = new Endpoint(Ports.connectHost(spec.host()), spec.port());
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
            String last = "no answer yet";
            while (true) {
                if (!process.isAlive()) {
                    return new Readiness.Exited(since(), Termination.exited(process.exitValue()));
                }
                int status = HealthProbe.status(uri);
                if (status == 200) {
                    return new Readiness.Ready(since(), "GET " + spec.readinessPath() + " 200");
                }
                last = status < 0 ? "connection refused" : "HTTP " + status;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return new Readiness.TimedOut(since(), last);
                }
                // Waiting on the process wakes up at once if it exits while we sleep.
                if (process.waitFor(Math.min(POLL.toNanos(), left), TimeUnit.NANOSECONDS)) {
                    return new Readiness.Exited(since(), Termination.exited(process.exitValue()));
                }
            }
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
            return process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS) ? termination() : Optional.empty();
        }

        @Override
        public Optional<Termination> termination() {
            if (stopped != null && stopped.ended() != null) {
                return Optional.of(stopped.ended());
            }
            return process.isAlive() ? Optional.empty() : Optional.of(Termination.exited(process.exitValue()));
        }

        @Override
        public synchronized StopReport stop() {
            if (stopped != null) {
                return stopped;
            }
            long t0 = System.nanoTime();
            long pgid = process.pid();
            // A leader that ended by itself ended for its own reasons, whatever its workers do now.
            boolean endedByItself = !process.isAlive();
            boolean clean = true;
            if (!ProcessGroups.members(pgid).isEmpty()) {
                ProcessGroups.signal(pgid, "TERM");
                clean = ProcessGroups.awaitGone(pgid, spec.shutdownTimeout());
            }
            // A second Ctrl-C cuts the TERM wait short to KILL at once, but the KILL and the wait for the group
            // to leave must still run in full: with the interrupt pending they returned at once, so the report
            // lost the exit code and could count dying processes as leftovers. The interrupt is kept for the run.
            boolean interrupted = Thread.interrupted();
            if (!clean) {
                ProcessGroups.signal(pgid, "KILL");
                ProcessGroups.awaitGone(pgid, KILL_WAIT);
            }
            try {
                process.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            List<Long> left = ProcessGroups.members(pgid);
            if (left.isEmpty() && ledger != null) {
                ledger.remove(entry);
            }
            Termination ended = null;
            if (!process.isAlive()) {
                ended = endedByItself
                        ? Termination.exited(process.exitValue())
                        : Termination.stopped(process.exitValue());
            }
            stopped = new StopReport(
                    clean && left.isEmpty(),
                    left,
                    ended,
                    Duration.ofNanos(System.nanoTime() - t0),
                    gpu == null ? null : gpu.usedMiB());
            return stopped;
        }
    }
}
