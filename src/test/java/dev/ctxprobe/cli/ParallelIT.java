package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** {@code run --parallel} with the local launcher: backends at once where ports allow, one document for all. */
class ParallelIT {
    @TempDir
    Path dir;

    @Test
    void backendsRunAtOnceExceptThoseSharingAFixedPortAndTheDocumentHoldsThemAll() throws IOException {
        int shared = TestEngines.freePort();
        // Each step holds its port for over a second: two backends on one port at once would collide (port_busy).
        String slow = "--startup-ms 800 --itl-ms 0";
        Path file = TestExperiments.write(
                dir,
                "together",
                "  strategy: list\n  targets: [1000, 2000]\n",
                "  output_len: 1\n  num_prompts: 1\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: 0\n",
                "{startup_s: 20, request_s: 5, shutdown_s: 3}",
                List.of(
                        new TestExperiments.Backend("a", "vllm", shared, slow),
                        new TestExperiments.Backend("b", "vllm", shared, slow),
                        new TestExperiments.Backend("c", "vllm", null, slow)));
        Path out = dir.resolve("out");
        CliRun run = CliRun.of("run", file.toString(), "--out", out.toString(), "--parallel", "3");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc = FaultRuns.results(FaultRuns.runDir(out, "together").orElseThrow());
        assertThat(doc.get("scenarios")).hasSize(6);
        for (JsonNode s : doc.get("scenarios")) {
            assertThat(s.get("outcome").asString()).as(s.toString()).isEqualTo("ok");
        }
        assertThat(doc.get("frontier").propertyNames()).containsExactlyInAnyOrder("a", "b", "c");
        // Every step got its line, numbered by the document.
        assertThat(run.out()).contains("[1] ", "[6] ");
        // b says why it takes turns, before its first step; c, on a port of its own, runs beside a on a machine
        // without accelerators (this one, or it has no nvidia-smi) and has nothing to say.
        assertThat(run.out()).contains("b waits: it uses port " + shared + " like a, which runs");
        if (!dev.ctxprobe.hardware.HardwareProbe.system().memoryUsed().available()) {
            assertThat(run.out()).doesNotContain("c waits");
        }
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(doc));
    }

    @Test
    void parallelIsOneOrMore() {
        CliRun run = CliRun.of("run", "--parallel", "0", "--dry-run");
        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err()).contains("--parallel is how many backends run at once: 1 or more, not 0");
    }
}
