package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Spec 07, Reliability: every fault of a server becomes one classified failure within its timeout, the run goes on
 * with the next step, and no process of any step's group is left. One run holds every fault, one backend each, so
 * each faulty step is followed by another step; a healthy backend comes last.
 */
class FaultsIT {
    /** Where a fault's clock starts, for the time from fault to classified failure. */
    enum Clock {
        /** The server's last log line is the fault itself (it died or refused with these words). */
        LAST_LOG_LINE,
        /** The server was ready; the fault hits the first request. */
        READY,
        /** The fault is never becoming ready: the clock runs from the launch. */
        LAUNCH,
        /** Nothing is launched: the clock runs from the end of the step before. */
        STEP_BEFORE
    }

    /** A fault, the class and phase it must get, and a piece of the evidence that proves it. */
    record Fault(String backend, String args, String outcome, String phase, String evidence, Clock clock) {}

    @TempDir
    Path dir;

    @Test
    void everyFaultIsClassifiedInTimeAndLeavesNoProcess() throws Exception {
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<Fault> faults = List.of(
                    new Fault(
                            "exits",
                            "--fault exit-at-once",
                            "startup_crash",
                            "startup",
                            "Engine core initialization failed",
                            Clock.LAST_LOG_LINE),
                    new Fault(
                            "neverready",
                            "--fault never-ready",
                            "startup_timeout",
                            "readiness",
                            "Waiting for the scheduler",
                            Clock.LAUNCH),
                    new Fault(
                            "crashes",
                            "--fault crash-mid-request",
                            "server_crash",
                            "measure",
                            "illegal memory access",
                            Clock.LAST_LOG_LINE),
                    new Fault("hangs", "--fault hang-after-headers", "timeout", "measure", "", Clock.READY),
                    new Fault("garbage", "--fault garbage-stream", "http_error", "measure", "", Clock.READY),
                    new Fault(
                            "errorevent",
                            "--fault error-event",
                            "http_error",
                            "measure",
                            "the scheduler failed",
                            Clock.READY),
                    new Fault("closes", "--fault close-mid-stream", "http_error", "measure", "", Clock.READY),
                    new Fault("ignoresterm", "--fault ignore-sigterm", "ok", null, null, Clock.LAST_LOG_LINE),
                    new Fault("leaveschild", "--fault leave-child", "ok", null, null, Clock.READY),
                    new Fault(
                            "portheld",
                            "",
                            "port_busy",
                            "preflight",
                            ":" + held.getLocalPort() + " succeeded",
                            Clock.STEP_BEFORE),
                    new Fault(
                            "oom",
                            "--fault oom-startup",
                            "oom_startup",
                            "startup",
                            "CUDA out of memory",
                            Clock.LAST_LOG_LINE),
                    new Fault(
                            "badargs",
                            "--fault bad-args",
                            "config_rejected",
                            "startup",
                            "invalid int value",
                            Clock.LAST_LOG_LINE),
                    new Fault("healthy", "", "ok", null, null, Clock.READY));
            List<Backend> backends = faults.stream()
                    .map(f -> new Backend(
                            f.backend(), f.backend().equals("portheld") ? held.getLocalPort() : null, f.args()))
                    .toList();
            Path exp = FaultRuns.write(dir, "faults", List.of(1000L), 0, backends);
            Path out = dir.resolve("out");

            Watcher watcher = new Watcher(out, "faults");
            Thread watching = Thread.ofPlatform().daemon().start(watcher);
            long t0 = System.nanoTime();
            CliRun run;
            try {
                run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");
            } finally {
                watcher.stop = true;
                watching.join();
            }
            double runS = (System.nanoTime() - t0) / 1e9;
            assertThat(watcher.broken)
                    .as("results.json read while the run wrote it")
                    .isNull();
            assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
            Path runDir = FaultRuns.runDir(out, "faults").orElseThrow();
            JsonNode doc = FaultRuns.results(runDir);
            JsonNode scenarios = doc.get("scenarios");
            assertThat(scenarios)
                    .as("one step per fault, in order: the run went on after each")
                    .hasSize(faults.size());

            List<String> timings = new ArrayList<>();
            Long stepBefore = null;
            for (int i = 0; i < faults.size(); i++) {
                Fault f = faults.get(i);
                JsonNode s = scenarios.get(i);
                assertThat(s.get("backend").asString()).isEqualTo(f.backend());
                assertThat(s.get("outcome").asString())
                        .as(f.backend() + ": " + s)
                        .isEqualTo(f.outcome());
                if (f.phase() != null) {
                    JsonNode failure = s.get("failure");
                    assertThat(failure.get("class").asString()).isEqualTo(f.outcome());
                    assertThat(failure.get("phase").asString()).as(f.backend()).isEqualTo(f.phase());
                    assertThat(failure.get("evidence"))
                            .as(f.backend() + " evidence")
                            .isNotEmpty();
                    assertThat(failure.get("evidence").toString())
                            .as(f.backend())
                            .contains(f.evidence());
                    assertThat(s.get("error").asString()).as(f.backend()).isNotBlank();
                }
                Long done = watcher.scenarioSeen.get(f.backend());
                assertThat(done)
                        .as("the watcher saw step %s written", f.backend())
                        .isNotNull();
                long start = start(f, s, runDir, watcher, stepBefore);
                double seconds = (done - start) / 1e9;
                timings.add(String.format(Locale.ROOT, "%-12s %-16s %6.2f s", f.backend(), f.outcome(), seconds));
                // No timed assertion beyond the step's own bound: startup, one request, TERM, KILL, plus a margin.
                assertThat(seconds)
                        .as(f.backend())
                        .isLessThan(FaultRuns.STARTUP_S + FaultRuns.REQUEST_S + FaultRuns.SHUTDOWN_S + 5 + 15);
                stepBefore = done;
            }
            System.out.println("fault -> classified failure (fault clock per FaultsIT.Clock), whole run "
                    + String.format(Locale.ROOT, "%.1f s", runS));
            timings.forEach(t -> System.out.println("  " + t));

            JsonNode ignored = scenarios.get(7).get("server");
            assertThat(ignored.get("stopped_cleanly").asBoolean()).isFalse();
            assertThat(ignored.get("leftover_pids")).isEmpty();
            assertThat(Files.readString(
                            runDir.resolve(scenarios.get(7).get("log").asString())))
                    .contains("Received SIGTERM, ignoring it");
            assertThat(scenarios.get(8).get("server").get("stopped_cleanly").asBoolean())
                    .isTrue();
            Matcher child = Pattern.compile("child pid (\\d+)")
                    .matcher(Files.readString(
                            runDir.resolve(scenarios.get(8).get("log").asString())));
            assertThat(child.find()).isTrue();
            FaultRuns.assertProcessGone(Long.parseLong(child.group(1)));

            JsonNode port = scenarios.get(9);
            assertThat(port.get("server").isNull() || !port.get("server").hasNonNull("pid"))
                    .as("nothing launched")
                    .isTrue();
            try (Stream<Path> logs = Files.list(runDir.resolve("logs"))) {
                assertThat(logs.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("portheld"));
            }
            assertThat(scenarios.get(2).get("failure").get("exit_code").asInt()).isEqualTo(137);

            List<Long> groups = FaultRuns.serverGroups(doc);
            assertThat(groups).hasSize(faults.size() - 1);
            FaultRuns.assertGroupsGone(groups);
            assertThat(runDir.resolve("servers.pid"))
                    .as("no live group is left to name")
                    .doesNotExist();
        }
    }

    private static long start(Fault f, JsonNode s, Path runDir, Watcher watcher, Long stepBefore) throws IOException {
        return switch (f.clock()) {
            case STEP_BEFORE -> stepBefore;
            case LAUNCH -> watcher.logSeen.get(f.backend());
            case READY ->
                watcher.logSeen.get(f.backend())
                        + (long) (s.get("server").get("startup_s").asDouble() * 1e9);
            case LAST_LOG_LINE -> {
                Path log = runDir.resolve(s.get("log").asString());
                long lastWriteMs = Files.getLastModifiedTime(log).toMillis();
                // The watcher's clock is nanoTime; the log's is the wall clock: convert through the launch.
                long launchNanos = watcher.logSeen.get(f.backend());
                long launchWallMs = watcher.logSeenWallMs.get(f.backend());
                yield launchNanos + (lastWriteMs - launchWallMs) * 1_000_000L;
            }
        };
    }

    /** Polls the run folder: when each step's log first appears, and when each step is first in results.json. */
    static final class Watcher implements Runnable {
        private final Path out;
        private final String experiment;
        final Map<String, Long> logSeen = new ConcurrentHashMap<>();
        final Map<String, Long> logSeenWallMs = new ConcurrentHashMap<>();
        final Map<String, Long> scenarioSeen = new ConcurrentHashMap<>();
        volatile boolean stop;
        volatile Throwable broken;

        Watcher(Path out, String experiment) {
            this.out = out;
            this.experiment = experiment;
        }

        @Override
        public void run() {
            while (!stop) {
                poll();
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
            poll();
        }

        private void poll() {
            Path runDir = FaultRuns.runDir(out, experiment).orElse(null);
            if (runDir == null) {
                return;
            }
            long now = System.nanoTime();
            long wall = System.currentTimeMillis();
            try (Stream<Path> logs = Files.list(runDir.resolve("logs"))) {
                logs.forEach(log -> {
                    String backend = log.getFileName().toString().replaceFirst("_ctx_.*", "");
                    if (logSeen.putIfAbsent(backend, now) == null) {
                        logSeenWallMs.put(backend, wall);
                    }
                });
            } catch (IOException notYet) {
                return;
            }
            Path results = runDir.resolve("results.json");
            if (!Files.exists(results)) {
                return;
            }
            try {
                for (JsonNode s : FaultRuns.results(runDir).get("scenarios")) {
                    scenarioSeen.putIfAbsent(s.get("backend").asString(), now);
                }
            } catch (IOException | RuntimeException e) {
                broken = e;
            }
        }
    }
}
