package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import dev.ctxprobe.launch.ProcessGroups;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failure 6: signals are handled until ctxprobe exits. A second signal during a teardown escalates it, a
 * signal during the final save or report never skips them, and whenever a signal came the exit code is 130.
 */
class FinishSignalsIT {
    private static final String IGNORING = "Received SIGTERM, ignoring it";

    @TempDir
    Path dir;

    private Process ctxprobe;
    private long group = -1;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
        if (group > 1 && !ProcessGroups.members(group).isEmpty()) {
            ProcessGroups.signal(group, "KILL");
        }
    }

    @Test
    void twoSigtermsDuringATeardownKillTheServerAndStillSaveTheFrontierAndTheReport() throws Exception {
        start("twice", List.of(1000L, 2000L), "--fault ignore-sigterm");
        group = FaultRuns.awaitServerUp(dir.resolve("out"), "twice", IGNORING, 30);

        FaultRuns.signal(ctxprobe.pid(), "TERM");
        Thread.sleep(100);
        FaultRuns.signal(ctxprobe.pid(), "TERM");

        JsonNode doc = finished(130);
        assertThat(doc.get("scenarios")).hasSize(1);
        assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("ok");
        assertThat(doc.get("frontier").get("engine").get("stopped_because").asString())
                .isEqualTo("interrupted");
        FaultRuns.assertGroupsGone(List.of(group));
    }

    @Test
    void aSigintThenASigtermBetweenStepsExit130WithTheReport() throws Exception {
        start("between", List.of(1000L, 2000L), "--fault ignore-sigterm");
        group = FaultRuns.awaitServerUp(dir.resolve("out"), "between", IGNORING, 30);

        FaultRuns.signal(ctxprobe.pid(), "INT");
        Thread.sleep(300);
        FaultRuns.signal(ctxprobe.pid(), "TERM");

        JsonNode doc = finished(130);
        assertThat(doc.get("frontier").has("engine")).isTrue();
        Path runDir = FaultRuns.runDir(dir.resolve("out"), "between").orElseThrow();
        assertThat(runDir.resolve("logs/engine_ctx_2000.log"))
                .as("no server is launched after the signals")
                .doesNotExist();
        FaultRuns.assertGroupsGone(List.of(group));
    }

    @Test
    void aCtrlCDuringTheLastStepsTeardownExits130() throws Exception {
        start("last", List.of(1000L), "--fault ignore-sigterm");
        group = FaultRuns.awaitServerUp(dir.resolve("out"), "last", IGNORING, 30);

        FaultRuns.signal(ctxprobe.pid(), "INT");

        JsonNode doc = finished(130);
        assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("ok");
        assertThat(doc.get("metadata").get("finished_at").isNull())
                .as("every step ran: the run is complete")
                .isFalse();
        FaultRuns.assertGroupsGone(List.of(group));
    }

    @Test
    void signalsAllThroughTheFinalSaveAndReportSkipNeither() throws Exception {
        start("storm", List.of(1000L), "");
        Path out = dir.resolve("out");
        // From the moment the only step is saved, a SIGTERM every 20 ms until ctxprobe exits: the frontier, the
        // finished time and the report are all written in that time.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && !stepSaved(out)) {
            Thread.sleep(5);
        }
        int sent = 0;
        while (ctxprobe.isAlive()) {
            try {
                FaultRuns.signal(ctxprobe.pid(), "TERM");
                sent++;
            } catch (AssertionError exitedMeanwhile) {
                break;
            }
            Thread.sleep(20);
        }
        System.out.println("signals during the final save and report: " + sent);
        assertThat(sent).isPositive();
        // 130 for the signals handled in Java; 143 when the last TERM came in the window where the signals are back
        // at their defaults and end the process by SIGTERM itself (README.md#commands). Never 0.
        JsonNode doc = finished(130, 143);
        assertThat(doc.get("metadata").get("finished_at").isNull()).isFalse();
        assertThat(doc.get("frontier").get("engine").get("max_ok_target").asLong())
                .isEqualTo(1000);
    }

    private void start(String name, List<Long> targets, String engineArgs) throws Exception {
        Path exp = FaultRuns.write(dir, name, targets, 0, List.of(new Backend("engine", null, engineArgs)));
        ctxprobe = FaultRuns.startCtxprobe(
                dir.resolve("ctxprobe.log"),
                "run",
                exp.toString(),
                "--out",
                dir.resolve("out").toString());
    }

    private boolean stepSaved(Path out) {
        return FaultRuns.runDir(out, "storm")
                .map(d -> {
                    try {
                        return FaultRuns.results(d).get("scenarios").size() == 1;
                    } catch (Exception notYet) {
                        return false;
                    }
                })
                .orElse(false);
    }

    // ctxprobe exits with one of the codes, its report is whole, and its results are what it returns.
    private JsonNode finished(Integer... codes) throws Exception {
        assertThat(ctxprobe.waitFor(60, TimeUnit.SECONDS)).as("ctxprobe exits").isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isIn((Object[]) codes);
        Path runDir = FaultRuns.runDir(
                        dir.resolve("out"),
                        Files.list(dir.resolve("out"))
                                .findFirst()
                                .orElseThrow()
                                .getFileName()
                                .toString())
                .orElseThrow();
        assertThat(output).doesNotContain("could not be written").doesNotContain("\tat ");
        assertThat(Files.readString(runDir.resolve("report.html"))).contains("</html>");
        JsonNode doc = FaultRuns.results(runDir);
        assertThat(doc.get("frontier")).as("the frontier section").isNotNull();
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();
        return doc;
    }
}
