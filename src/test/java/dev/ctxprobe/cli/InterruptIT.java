package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Spec 07: Ctrl-C or SIGTERM to a real {@code ctxprobe run} stops the live server's group and keeps the results. */
class InterruptIT {
    private static final String READY = "Application startup complete.";

    @TempDir
    Path dir;

    private Process ctxprobe;
    private long serverGroup = -1;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        if (serverGroup > 1
                && !dev.ctxprobe.launch.ProcessGroups.members(serverGroup).isEmpty()) {
            dev.ctxprobe.launch.ProcessGroups.signal(serverGroup, "KILL");
        }
    }

    @Test
    void sigintDuringARequestStopsTheServerGroupAndExits130() throws Exception {
        interruptAndCheck("INT", false, "");
    }

    @Test
    void sigtermBehavesLikeSigint() throws Exception {
        interruptAndCheck("TERM", false, "");
    }

    @Test
    void aSecondSigintDuringTheStopStillLeavesNoProcess() throws Exception {
        // The server ignores SIGTERM, so the first Ctrl-C's stop is still waiting when the second one comes.
        interruptAndCheck("INT", true, "--fault ignore-sigterm");
    }

    @Test
    void aSigintWhileAFinishedStepsServerStopsLaunchesNoOtherServer() throws Exception {
        // The server ignores SIGTERM: its stop waits shutdown_s, and the signal comes during that wait.
        Path exp = FaultRuns.write(
                dir,
                "between",
                List.of(1000L, 2000L),
                0,
                List.of(new Backend("engine", null, "--fault ignore-sigterm")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());
        serverGroup = FaultRuns.awaitServerUp(out, "between", "Received SIGTERM, ignoring it", 30);

        FaultRuns.signal(ctxprobe.pid(), "INT");

        assertThat(ctxprobe.waitFor(30, TimeUnit.SECONDS)).as("ctxprobe exits").isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(130);
        Path runDir = FaultRuns.runDir(out, "between").orElseThrow();
        JsonNode scenarios = FaultRuns.results(runDir).get("scenarios");
        assertThat(scenarios).as(output).hasSize(1);
        assertThat(scenarios.get(0).get("outcome").asString()).isEqualTo("ok");
        assertThat(runDir.resolve("logs/engine_ctx_2000.log"))
                .as("no server is launched after the Ctrl-C")
                .doesNotExist();
        FaultRuns.assertGroupsGone(List.of(serverGroup));
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();
    }

    @Test
    void aSigintWhileTheServerLoadsIsInterruptedInTheReadinessPhase() throws Exception {
        Path exp = FaultRuns.write(
                dir, "loading", List.of(1000L), 0, List.of(new Backend("engine", null, "--startup-ms 30000")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());
        serverGroup = FaultRuns.awaitServerUp(out, "loading", "Initializing a V1 LLM engine", 30);

        FaultRuns.signal(ctxprobe.pid(), "INT");

        assertThat(ctxprobe.waitFor(30, TimeUnit.SECONDS)).as("ctxprobe exits").isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(130);
        JsonNode step = FaultRuns.results(FaultRuns.runDir(out, "loading").orElseThrow())
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("interrupted");
        assertThat(step.get("failure").get("phase").asString()).isEqualTo("readiness");
        FaultRuns.assertGroupsGone(List.of(serverGroup));
    }

    private void interruptAndCheck(String signal, boolean twice, String fault) throws Exception {
        // One request takes 2.5 s of simulated prefill, well inside request_s, so the signal lands mid-request.
        Path exp = FaultRuns.write(
                dir,
                "interrupt",
                List.of(1000L, 2000L),
                0,
                List.of(new Backend("engine", null, "--prefill-us-per-token 2500 " + fault)));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());

        serverGroup = FaultRuns.awaitServerUp(out, "interrupt", READY, 30);
        FaultRuns.signal(ctxprobe.pid(), signal);
        if (twice) {
            Thread.sleep(300);
            FaultRuns.signal(ctxprobe.pid(), signal);
        }
        assertThat(ctxprobe.waitFor(30, TimeUnit.SECONDS)).as("ctxprobe exits").isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(130);

        Path runDir = FaultRuns.runDir(out, "interrupt").orElseThrow();
        JsonNode doc = FaultRuns.results(runDir);
        JsonNode scenarios = doc.get("scenarios");
        assertThat(scenarios)
                .as("the interrupted step is recorded, the next one is not run")
                .hasSize(1);
        JsonNode step = scenarios.get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("interrupted");
        assertThat(step.get("failure").get("class").asString()).isEqualTo("interrupted");
        assertThat(step.get("server").get("pid").asLong()).isEqualTo(serverGroup);
        assertThat(step.get("server").get("leftover_pids")).as(output).isEmpty();
        assertThat(doc.get("metadata").get("finished_at").isNull()).isTrue();
        FaultRuns.assertGroupsGone(List.of(serverGroup));
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();
        assertThat(output).contains("--resume " + runDir).doesNotContain("could not be written");
        assertThat(runDir.resolve("report.html")).exists();
        if (twice) {
            assertThat(output).contains("killing the server group now");
            assertThat(step.get("server").get("stopped_cleanly").asBoolean()).isFalse();
            assertThat(step.get("server").get("exit_code").asInt()).isEqualTo(137);
        }
    }
}
