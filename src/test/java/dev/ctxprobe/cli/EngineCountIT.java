package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25: a concurrency probe records the engine's own count from its /metrics beside the client's timing
 * (docs/results.md, "engine_count"), through real launches of the vLLM-like test engine with a KV pool of 4,096
 * tokens: four requests of 768 tokens and 16 output are held at once, four of 1,024 are not (one waits). An engine
 * whose /metrics shows fewer running than it runs is caught as disagreeing with the timing.
 */
class EngineCountIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String SWEEP = "  strategy: frontier\n"
            + "  frontier: {min: 256, max: 1024, precision: 0.01, align: 256, max_launches: 4}\n"
            + "  concurrency: [1, 4]\n";
    // 40 ms between tokens: the four run together for about 600 ms, several reads of /metrics.
    private static final String ENGINE = "--capacity 4096 --kv-pool 4096 --itl-ms 40";

    @TempDir
    Path dir;

    private List<JsonNode> probesOfFour(String name, String engineArgs) throws IOException {
        Path exp = TestExperiments.write(
                dir,
                name,
                SWEEP,
                "  output_len: 16\n  warmup: 0\n",
                "{startup_s: 20, request_s: 60, shutdown_s: 3}",
                List.of(new TestExperiments.Backend("pool", "vllm", null, engineArgs)));
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        List<JsonNode> four = new ArrayList<>();
        doc.get("scenarios").forEach(s -> {
            if (s.get("concurrency").asInt() == 4) {
                four.add(s);
            } else {
                assertThat(s.has("engine_count"))
                        .as("a single request is not counted: " + s)
                        .isFalse();
            }
        });
        assertThat(four).isNotEmpty();
        return four;
    }

    private static List<String> countWarnings(JsonNode step) {
        List<String> w = new ArrayList<>();
        step.get("warnings").forEach(x -> {
            if (x.asString().startsWith("the engine's /metrics")) {
                w.add(x.asString());
            }
        });
        return w;
    }

    @Test
    void theEngineCountAgreesWithTheTimingHeldOrQueued() throws IOException {
        boolean held = false;
        boolean queued = false;
        for (JsonNode s : probesOfFour("agree", ENGINE)) {
            JsonNode c = s.get("engine_count");
            assertThat(c).as(s.toString()).isNotNull();
            assertThat(c.get("source").asString()).isEqualTo("/metrics");
            assertThat(c.get("preemptions").asLong()).isZero();
            assertThat(countWarnings(s)).as(s.toString()).isEmpty();
            if (s.get("success").asBoolean()) {
                held = true;
                assertThat(c.get("max_running").asInt()).as(c.toString()).isEqualTo(4);
            } else {
                queued = true;
                assertThat(s.get("outcome").asString()).isEqualTo("not_concurrent");
                // The pool runs three of 1,040 tokens; the fourth waits for one of them.
                assertThat(c.get("max_running").asInt()).as(c.toString()).isEqualTo(3);
                assertThat(c.get("max_waiting").asInt()).as(c.toString()).isPositive();
            }
        }
        assertThat(held).isTrue();
        assertThat(queued).isTrue();
    }

    @Test
    void anEngineCountThatDisagreesWithTheTimingIsAWarning() throws IOException {
        boolean warned = false;
        for (JsonNode s : probesOfFour("undercount", ENGINE + " --fault undercount-running")) {
            if (s.get("success").asBoolean()) {
                warned = true;
                assertThat(s.get("engine_count").get("max_running").asInt()).isEqualTo(3);
                assertThat(countWarnings(s))
                        .as(s.toString())
                        .singleElement()
                        .asString()
                        .startsWith("the engine's /metrics saw at most 3 of 4 running at once in ")
                        .endsWith("; the timing says all 4 were held at once");
            }
        }
        assertThat(warned).isTrue();
    }
}
