package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failures 1, 2 and 12: every network wait ends within its own deadline, whatever a server does with its
 * bytes, and a Ctrl-C ends any of them at once. The servers are the test engine playing each fault.
 */
class WaitsIT {
    private static final int STARTUP_S = 10;
    private static final int REQUEST_S = 3;
    private static final int SHUTDOWN_S = 2;
    private static final String TIMEOUTS =
            "{startup_s: " + STARTUP_S + ", request_s: " + REQUEST_S + ", shutdown_s: " + SHUTDOWN_S + "}";

    @TempDir
    Path dir;

    private Process ctxprobe;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    @Test
    void aHealthBodyTrickledAByteAtATimeEndsAtTheStartupDeadline() throws Exception {
        Path exp = FaultRuns.write(
                dir,
                "slowhealth",
                List.of(1000L),
                0,
                TIMEOUTS,
                "",
                List.of(new Backend("slow", null, "--fault slow-health")));
        Path out = dir.resolve("out");

        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode step = FaultRuns.results(FaultRuns.runDir(out, "slowhealth").orElseThrow())
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("startup_timeout");
        double waited = step.get("server").get("startup_s").asDouble();
        System.out.printf(
                Locale.ROOT, "slow /health: startup_timeout after %.2f s (startup_s %d)%n", waited, STARTUP_S);
        assertThat(waited).isBetween((double) STARTUP_S, STARTUP_S + 2.0);
        FaultRuns.assertGroupsGone(List.of(step.get("server").get("pid").asLong()));
    }

    @Test
    void aCtrlCDuringASlowHealthAnswerEndsTheRunAtOnce() throws Exception {
        Path exp = FaultRuns.write(
                dir,
                "slowint",
                List.of(1000L),
                0,
                TIMEOUTS,
                "",
                List.of(new Backend("slow", null, "--fault slow-health")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());
        long group = FaultRuns.awaitServerUp(out, "slowint", "Initializing a V1 LLM engine", 30);
        // Inside a probe: the body's first bytes have been sent, the rest comes 1.5 s a byte.
        Thread.sleep(1500);

        long t0 = System.nanoTime();
        FaultRuns.signal(ctxprobe.pid(), "INT");
        assertThat(ctxprobe.waitFor(30, TimeUnit.SECONDS)).isTrue();
        double took = (System.nanoTime() - t0) / 1e9;

        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(130);
        System.out.printf(Locale.ROOT, "Ctrl-C during a slow /health: exited after %.2f s%n", took);
        // The stop (TERM, the engine exits at once) and the report are part of it; no probe is waited out.
        assertThat(took).isLessThan(SHUTDOWN_S + 2.0);
        JsonNode step = FaultRuns.results(FaultRuns.runDir(out, "slowint").orElseThrow())
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("interrupted");
        assertThat(step.get("failure").get("phase").asString()).isEqualTo("readiness");
        FaultRuns.assertGroupsGone(List.of(group));
    }

    /**
     * One run with a backend per misbehaving answer, in a child process whose peak memory is watched: a stream and
     * a body that never end stop at the read limits, a slow endless stream at request_s, a /health that says 200
     * too early is waited out, and vLLM's older error event gives its real text as evidence.
     */
    @Test
    void endlessAnswersStopAtTheirLimitsWithTheirCauseAndLittleMemory() throws Exception {
        List<Backend> backends = List.of(
                new Backend("endless", null, "--fault endless-stream"),
                new Backend("endlessjson", null, "--fault endless-json"),
                new Backend("trickle", null, "--fault slow-endless-stream"),
                new Backend("early", null, "--fault health-early --not-ready-ms 3000"),
                new Backend("olderror", null, "--fault old-error-event"));
        Path exp = FaultRuns.write(dir, "endless", List.of(1000L), 0, TIMEOUTS, "", backends);
        Path out = dir.resolve("out");
        FaultsIT.Watcher watcher = new FaultsIT.Watcher(out, "endless");
        Thread watching = Thread.ofPlatform().daemon().start(watcher);
        ctxprobe = FaultRuns.startCtxprobe(
                dir.resolve("ctxprobe.log"),
                Map.of(),
                List.of("-Xmx256m"),
                "run",
                exp.toString(),
                "--out",
                out.toString());
        long peak = 0;
        while (!ctxprobe.waitFor(50, TimeUnit.MILLISECONDS)) {
            peak = Math.max(peak, FaultRuns.peakRssMib(ctxprobe.pid()));
        }
        watcher.stop = true;
        watching.join();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isZero();
        Path runDir = FaultRuns.runDir(out, "endless").orElseThrow();
        JsonNode scenarios = FaultRuns.results(runDir).get("scenarios");
        assertThat(scenarios).hasSize(backends.size());

        JsonNode endless = scenarios.get(0);
        assertThat(endless.get("outcome").asString()).as(endless.toString()).isEqualTo("http_error");
        assertThat(endless.get("error").asString()).contains("the server sent more than 16.0 MiB for one response");
        JsonNode json = scenarios.get(1);
        assertThat(json.get("outcome").asString()).as(json.toString()).isEqualTo("http_error");
        assertThat(json.get("error").asString()).contains("the server sent more than");
        JsonNode trickle = scenarios.get(2);
        assertThat(trickle.get("outcome").asString()).as(trickle.toString()).isEqualTo("timeout");
        JsonNode early = scenarios.get(3);
        assertThat(early.get("outcome").asString()).as(early.toString()).isEqualTo("ok");
        JsonNode old = scenarios.get(4);
        assertThat(old.get("outcome").asString()).as(old.toString()).isEqualTo("request_rejected");
        assertThat(old.get("failure").get("evidence").toString())
                .contains("maximum context length")
                .doesNotContain("[\"null\"]");

        System.out.println("issue 14, endless answers (request_s " + REQUEST_S + ", shutdown_s " + SHUTDOWN_S
                + "), ready to step recorded, stop included:");
        for (int i = 0; i < 3; i++) {
            JsonNode s = scenarios.get(i);
            String name = s.get("backend").asString();
            double ready = watcher.logSeen.get(name) / 1e9
                    + s.get("server").get("startup_s").asDouble();
            double seconds = watcher.scenarioSeen.get(name) / 1e9 - ready;
            System.out.printf(
                    Locale.ROOT,
                    "  %-12s %-11s %5.2f s%n",
                    name,
                    s.get("outcome").asString(),
                    seconds);
            assertThat(seconds).as(name).isLessThan(REQUEST_S + 2.0 + SHUTDOWN_S);
        }
        System.out.println("  peak resident memory of ctxprobe (default heap): " + peak + " MiB");
        assertThat(peak).isPositive().isLessThan(400);
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(FaultRuns.results(runDir)));
    }
}
