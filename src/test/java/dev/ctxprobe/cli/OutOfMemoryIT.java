package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
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
 * Issue 14, failure 4: an OutOfMemoryError killed ctxprobe and left the server running. Here a body that never ends
 * meets a read limit set far above a 64 MiB heap: the error is ctxprobe's own, so the step is client_error naming
 * it, its server is stopped, and the run goes on.
 */
class OutOfMemoryIT {
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

    /**
     * The search's first step of an {@code auto_first} backend measures a server that fitted its own length: the same
     * error there must stop that server too.
     */
    @Test
    void anOutOfMemoryErrorInASelfSizedFirstStepStopsItsServer() throws Exception {
        Path exp = TestExperiments.write(
                dir,
                "oom_auto",
                "  strategy: frontier\n  frontier: {min: 1000, max: 4000, precision: 0.01, align: 256, max_launches: 3}\n",
                "  output_len: 1\n  num_prompts: 1\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: 0\n",
                "{startup_s: 20, request_s: 30, shutdown_s: 2}",
                "limits: {response_mib: 4096}\n",
                List.of(new TestExperiments.Backend("endless", "vllm", null, "--fault endless-json")));
        Files.writeString(
                exp, Files.readString(exp).replace("    engine: vllm\n", "    engine: vllm\n    auto_first: true\n"));
        Path runDir = runWithSmallHeap(exp, "oom_auto");
        JsonNode doc = FaultRuns.results(runDir);
        JsonNode step = doc.get("scenarios").get(0);
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("client_error");
        assertThat(step.get("error").asString()).contains("it ran out of memory: Java heap space");
        // Judged where it happened, with the server's log, and that server stopped by the step, not only at exit.
        assertThat(step.get("failure").get("phase").asString())
                .as(step.toString())
                .isEqualTo("measure");
        assertThat(step.get("server").get("ended").get("reason").asString())
                .as(step.toString())
                .isEqualTo("stopped");
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(doc));
        assertThat(FaultRuns.markedProcesses(runDir)).isEmpty();
    }

    @Test
    void anOutOfMemoryErrorIsAClientErrorWithItsCauseAndStopsTheServer() throws Exception {
        Path exp = FaultRuns.write(
                dir,
                "oom",
                List.of(1000L),
                0,
                "{startup_s: 20, request_s: 30, shutdown_s: 2}",
                "limits: {response_mib: 4096}\n",
                List.of(new Backend("endless", null, "--fault endless-json"), new Backend("healthy", null, "")));
        Path runDir = runWithSmallHeap(exp, "oom");
        JsonNode doc = FaultRuns.results(runDir);
        JsonNode step = doc.get("scenarios").get(0);
        System.out.println(
                "the step that ran out of memory: " + step.get("error").asString());
        assertThat(step.get("outcome").asString()).isEqualTo("client_error");
        assertThat(step.get("error").asString()).contains("it ran out of memory: Java heap space");
        assertThat(step.get("failure").get("evidence").toString()).contains("OutOfMemoryError");
        assertThat(doc.get("scenarios").get(1).get("outcome").asString()).isEqualTo("ok");
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(doc));
        assertThat(FaultRuns.markedProcesses(runDir)).isEmpty();
    }

    /** Runs {@code exp} in a ctxprobe with a 64 MiB heap, which must end by itself with exit 0; its run folder. */
    private Path runWithSmallHeap(Path exp, String name) throws Exception {
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(
                dir.resolve("ctxprobe.log"),
                Map.of(),
                List.of("-Xmx64m"),
                "run",
                exp.toString(),
                "--out",
                out.toString());
        assertThat(ctxprobe.waitFor(90, TimeUnit.SECONDS)).isTrue();
        String output = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(output).isZero();
        return FaultRuns.runDir(out, name).orElseThrow();
    }
}
