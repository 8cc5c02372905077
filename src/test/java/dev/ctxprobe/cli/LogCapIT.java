package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, point 12: a server that logged a gigabyte at startup had it written to disk whole. The log now keeps
 * limits.server_log_mib: its head (where engines print their configuration) and its tail (capacity lines, the cause
 * of an exit), marked where it was cut, and classification still finds both.
 */
class LogCapIT {
    @TempDir
    Path dir;

    @Test
    void aChattyServersLogKeepsItsHeadAndTailWithinTheCap() throws Exception {
        long chatterMib = 200;
        Path exp = FaultRuns.write(
                dir,
                "chatty",
                List.of(1000L),
                0,
                "{startup_s: 60, request_s: 5, shutdown_s: 2}",
                "limits: {server_log_mib: 4}\n",
                List.of(new Backend(
                        "chatty", null, "--fault chatty-startup --log-mib " + chatterMib + " --capacity 77777")));
        Path out = dir.resolve("out");

        long t0 = System.nanoTime();
        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");
        double seconds = (System.nanoTime() - t0) / 1e9;

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Path runDir = FaultRuns.runDir(out, "chatty").orElseThrow();
        JsonNode step = FaultRuns.results(runDir).get("scenarios").get(0);
        Path log = runDir.resolve(step.get("log").asString());
        long size = Files.size(log);
        System.out.printf(
                Locale.ROOT,
                "a server logging %d MiB at startup: log kept %.2f MiB (server_log_mib 4), run %.1f s%n",
                chatterMib,
                size / 1048576.0,
                seconds);
        assertThat(step.get("outcome").asString()).isEqualTo("ok");
        assertThat(size).isLessThanOrEqualTo((4L << 20) + 256);
        String text = Files.readString(log);
        assertThat(text)
                .startsWith("INFO Initializing a V1 LLM engine")
                .contains("ctxprobe left out")
                .contains("GPU KV cache size: 77,777 tokens")
                .contains("Application startup complete.");
        assertThat(step.get("server").get("kv_capacity_tokens").asLong())
                .as("the capacity line, from the tail")
                .isEqualTo(77_777);
    }
}
