package dev.ctxprobe.launch;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * Starts each server as the leader of a new session and process group ({@code setsid}), with its output in a
 * log file, and stops it by signalling the whole group: engines spawn workers that outlive their parent
 * (spec 04, Processes).
 */
public final class LocalLauncher implements Launcher {
    /** Readiness is polled at most this far apart (spec 07: at most every 250 ms). */
    static final Duration POLL = Duration.ofMillis(100);

    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private final PidFile pidFile;

    /** @param pidFile where live groups are recorded, or null to record nowhere */
    public LocalLauncher(PidFile pidFile) {
        this.pidFile = pidFile;
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) throws IOException {
        Files.createDirectories(spec.logFile().getParent());
        List<String> argv = new ArrayList<>();
        argv.add("setsid");
        argv.addAll(SelfCommand.expand(spec.argv()));
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(spec.logFile().toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        pb.environment().putAll(spec.env());
        long started = System.nanoTime();
        Process process = pb.start();
        if (pidFile != null) {
            pidFile.add(process.pid());
        }
        awaitOwnGroup(process);
        return new LocalServer(spec, process, started);
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

    private final class LocalServer implements ServerHandle {
        private final LaunchSpec spec;
        private final Process process;
        private final long startedNanos;
        private StopReport stopped;

        LocalServer(LaunchSpec spec, Process process, long startedNanos) {
            this.spec = spec;
            this.process = process;
            this.startedNanos = startedNanos;
        }

        @Override
        public long pid() {
            return process.pid();
        }

        @Override
        public Path logFile() {
            return spec.logFile();
        }

        @Override
        public Readiness awaitReady() throws InterruptedException {
            URI uri = URI.create("http://" + Ports.connectHost(spec.host()) + ":" + spec.port() + spec.readinessPath());
            long deadline = startedNanos + spec.startupTimeout().toNanos();
            String last = "no answer yet";
            while (true) {
                if (!process.isAlive()) {
                    return new Readiness.Exited(since(), process.exitValue());
                }
                int status = probe(uri);
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
                    return new Readiness.Exited(since(), process.exitValue());
                }
            }
        }

        private Duration since() {
            return Duration.ofNanos(System.nanoTime() - startedNanos);
        }

        private static int probe(URI uri) {
            HttpURLConnection c = null;
            try {
                c = (HttpURLConnection) uri.toURL().openConnection();
                c.setConnectTimeout(500);
                c.setReadTimeout(2000);
                c.setUseCaches(false);
                int code = c.getResponseCode();
                // A few KB at most: a health answer that never ends must not stall readiness past startup_s.
                var body = code < 400 ? c.getInputStream() : c.getErrorStream();
                if (body != null) {
                    body.readNBytes(4096);
                    body.close();
                }
                return code;
            } catch (IOException notYet) {
                return -1;
            } finally {
                if (c != null) {
                    c.disconnect();
                }
            }
        }

        @Override
        public boolean isAlive() {
            return process.isAlive();
        }

        @Override
        public boolean awaitExit(Duration limit) throws InterruptedException {
            return process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public OptionalInt exitCode() {
            return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
        }

        @Override
        public synchronized StopReport stop() {
            if (stopped != null) {
                return stopped;
            }
            long t0 = System.nanoTime();
            long pgid = process.pid();
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
            if (left.isEmpty() && pidFile != null) {
                pidFile.remove(pgid);
            }
            Integer code = process.isAlive() ? null : process.exitValue();
            stopped = new StopReport(
                    clean && left.isEmpty(), List.copyOf(left), code, Duration.ofNanos(System.nanoTime() - t0));
            return stopped;
        }
    }
}
