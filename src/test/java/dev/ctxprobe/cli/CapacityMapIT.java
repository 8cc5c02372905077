package dev.ctxprobe.cli;

import static dev.ctxprobe.cli.CapacityMaps.level;
import static dev.ctxprobe.cli.CapacityMaps.servers;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25: the capacity map through real launches of the test engine with a shared KV pool. Each level's largest
 * target held at once is the pool's arithmetic, a request that only queued or was preempted is caught by its
 * timing as {@code not_concurrent}, and the whole map costs at most one launch more than the single-prompt frontier.
 */
class CapacityMapIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String LOAD = "  output_len: 16\n  warmup: 0\n";
    private static final long POOL = 16_384;
    private static final int OUTPUT = 16;
    private static final long ALIGN = 256;
    private static final String SWEEP = "  strategy: frontier\n"
            + "  frontier: {min: 256, max: 32768, precision: 0.01, align: 256, max_launches: 12}\n"
            + "  concurrency: [1, 2, 4]\n";

    @TempDir
    Path dir;

    private JsonNode run(String name, String backend) throws IOException {
        String[] b = backend.split("\\|", 3);
        // Long enough for four queued prompts of the slow prefill: a timeout would replace the kept server.
        Path exp = TestExperiments.write(
                dir,
                name,
                SWEEP,
                LOAD,
                "{startup_s: 20, request_s: 60, shutdown_s: 3}",
                java.util.List.of(new TestExperiments.Backend(b[0], b[1], null, b[2])));
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    /** The largest aligned target whose {@code n} requests, prompt and output, fit in the pool together. */
    private static long held(int n) {
        return (POOL / n - OUTPUT) / ALIGN * ALIGN;
    }

    @Test
    void anSglangLikePoolIsMappedByItsArithmeticInOneLaunchMore() throws IOException {
        JsonNode doc = run("reserve", "pool|vllm|--capacity " + POOL + " --kv-pool " + POOL + " --itl-ms 2");
        JsonNode f = doc.get("frontier").get("pool");

        for (int n : new int[] {2, 4}) {
            JsonNode level = level(f, n);
            assertThat(level.get("max_ok_target").asLong()).as(level.toString()).isEqualTo(held(n));
            assertThat(level.get("min_failed_target").asLong())
                    .as(level.toString())
                    .isEqualTo(held(n) + ALIGN);
            assertThat(level.get("cause").asString()).isEqualTo("not_concurrent");
            assertThat(level.get("detail").asString()).contains("queued");
        }
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
        doc.get("scenarios").forEach(s -> {
            if (s.get("concurrency").asInt() > 1 && s.get("success").asBoolean()) {
                assertThat(s.get("requests")).hasSize(s.get("concurrency").asInt());
                s.get("requests")
                        .forEach(r -> assertThat(r.get("prompt_tokens").asLong())
                                .isEqualTo(s.get("target_len").asLong()));
            }
        });
    }

    @Test
    void aPreemptingVllmLikePoolIsCaughtAsNotHeldAtOnce() throws IOException {
        JsonNode doc = run(
                "preempt",
                "pool|vllm|--capacity " + POOL + " --kv-pool " + POOL
                        + " --preempt --itl-ms 5 --prefill-us-per-token 100");
        JsonNode f = doc.get("frontier").get("pool");

        JsonNode two = level(f, 2);
        // Admitted for their prompts, the two grow past the pool while decoding: one loses its cells.
        assertThat(two.get("max_ok_target").asLong()).as(two.toString()).isLessThanOrEqualTo(held(2) + ALIGN);
        assertThat(two.get("cause").asString()).isEqualTo("not_concurrent");
        assertThat(two.get("detail").asString()).as(f.toString()).contains("preempted");
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
        // The engine's own /metrics counted the preemption the timing saw (docs/results.md, engine_count).
        boolean counted = false;
        for (JsonNode s : doc.get("scenarios")) {
            if (s.get("failure").hasNonNull("detail")
                    && s.get("failure").get("detail").asString().contains("preempted")) {
                counted = true;
                assertThat(s.get("engine_count").get("preemptions").asLong())
                        .as(s.toString())
                        .isPositive();
            }
        }
        assertThat(counted).isTrue();
    }

    @Test
    void autoGoesUpToTheRunningRequestsTheServerStates() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "auto",
                SWEEP.replace("[1, 2, 4]", "auto"),
                LOAD,
                "{startup_s: 20, request_s: 60, shutdown_s: 3}",
                java.util.List.of(new TestExperiments.Backend(
                        "pool",
                        "sglang",
                        null,
                        "--mode sglang --capacity " + POOL
                                + " --kv-pool capacity --max-running-requests 4 --itl-ms 5")));
        CliRun validate = CliRun.of("validate", exp.toString());
        assertThat(validate.out())
                .contains("sweep.concurrency auto: the levels double from 2 up to what the first"
                        + " server states it holds at once");
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("auto"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        JsonNode f = doc.get("frontier").get("pool");

        assertThat(doc.get("config").get("concurrency").asString()).isEqualTo("auto");
        // The server states max_running_requests=4: levels 2 and 4, each the pool's arithmetic.
        assertThat(f.get("surface")).hasSize(2);
        for (int n : new int[] {2, 4}) {
            assertThat(level(f, n).get("max_ok_target").asLong())
                    .as(f.toString())
                    .isEqualTo(held(n));
        }
    }

    @Test
    void aLevelAboveTheStatedSlotsIsAnsweredWithoutSending() throws IOException {
        JsonNode doc = run("slots", "pool|llamacpp|--mode llamacpp --capacity " + POOL + " -np 2 --kv-unified");
        JsonNode f = doc.get("frontier").get("pool");

        JsonNode four = level(f, 4);
        assertThat(four.get("max_ok_target").isNull()).as(four.toString()).isTrue();
        assertThat(four.get("cause").asString()).isEqualTo("not_concurrent");
        assertThat(four.get("detail").asString())
                .isEqualTo("more requests than slots (4 at once, the server has 2): not sent");
        doc.get("scenarios")
                .forEach(s -> assertThat(s.get("concurrency").asInt())
                        .as("no step sends more requests than the 2 slots")
                        .isLessThanOrEqualTo(2));
        assertThat(level(f, 2).get("max_ok_target").asLong()).isPositive();
    }
}
