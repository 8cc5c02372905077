package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import dev.ctxprobe.launch.ProcessGroups;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 30, failure 2: a SIGHUP (a closed terminal, a dropped ssh session) exited 129 at once, leaving the server
 * running, the step unrecorded and no report. It is now an interrupt like Ctrl-C, with exit code 129.
 */
class HangupIT {
    private static final String READY = "Application startup complete.";

    @TempDir
    Path dir;

    private Process ctxprobe;
    private PtyRuns.Terminal terminal;
    private long serverGroup = -1;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        if (terminal != null && terminal.process().isAlive()) {
            terminal.process().destroyForcibly();
        }
        if (serverGroup > 1 && !ProcessGroups.members(serverGroup).isEmpty()) {
            ProcessGroups.signal(serverGroup, "KILL");
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    private Path experiment() throws Exception {
        // One request takes 2.5 s of simulated prefill: the hang-up lands mid-request.
        return FaultRuns.write(
                dir,
                "hangup",
                List.of(1000L, 2000L),
                0,
                List.of(new Backend("engine", null, "--prefill-us-per-token 2500")));
    }

    @Test
    void closingTheTerminalStopsTheServerRecordsTheStepAndWritesTheReport() throws Exception {
        PtyRuns.assumePython();
        // The terminal's child inherits this JVM's signal dispositions.
        FaultRuns.requireHandled(ProcessHandle.current().pid(), "HUP");
        Path out = dir.resolve("out");
        terminal = PtyRuns.start(dir, Map.of(), "run", experiment().toString(), "--out", out.toString());
        serverGroup = FaultRuns.awaitServerUp(out, "hangup", READY, 30);

        terminal.hangUp();

        assertThat(terminal.outcome(60)).isEqualTo("exit 129");
        checkInterrupted(out);
    }

    @Test
    void aHangupSaysWhatCtrlCSaysAndExits129() throws Exception {
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(
                dir.resolve("ctxprobe.log"), "run", experiment().toString(), "--out", out.toString());
        serverGroup = FaultRuns.awaitServerUp(out, "hangup", READY, 30);

        FaultRuns.signal(ctxprobe.pid(), "HUP");

        assertThat(ctxprobe.waitFor(30, TimeUnit.SECONDS)).as("ctxprobe exits").isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(129);
        Path runDir = checkInterrupted(out);
        assertThat(output)
                .contains("stopping the server and saving partial results")
                .contains("continue with: ctxprobe run --resume " + runDir);
    }

    private Path checkInterrupted(Path out) throws Exception {
        Path runDir = FaultRuns.runDir(out, "hangup").orElseThrow();
        JsonNode scenarios = FaultRuns.results(runDir).get("scenarios");
        assertThat(scenarios)
                .as("the interrupted step is recorded, the next one is not run")
                .hasSize(1);
        assertThat(scenarios.get(0).get("outcome").asString()).isEqualTo("interrupted");
        FaultRuns.assertGroupsGone(List.of(serverGroup));
        assertThat(FaultRuns.markedProcesses(runDir))
                .as("no process of the run is left")
                .isEmpty();
        assertThat(runDir.resolve("report.html")).exists();
        return runDir;
    }
}
