package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25's done-when: {@code ctxprobe plan}, then {@code ctxprobe run} of the same file with {@code
 * sweep.concurrency: [1, 2, 4]}, on the test engine's vLLM-like (preempting) and SGLang-like (reserving) modes, each
 * sizing its one shared KV pool from the model config and machine as the real engines do. The surface measured
 * through real launches is the capacity arithmetic, {@code pool / N - output_len} aligned down, and what {@code
 * plan} predicted before any launch.
 */
class SurfacePlanIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long ALIGN = 256;
    private static final int OUTPUT = 16;

    /** 4 layers, 8 KV heads of 128, bf16: 16,384 B of KV a token, 8,192 B on each of two tensor-parallel ranks. */
    private static final String CONFIG = """
            {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4,
             "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
             "max_position_embeddings": 1048576, "torch_dtype": "bfloat16"}
            """;

    @TempDir
    Path dir;

    @Test
    void theMeasuredSurfaceIsTheCapacityArithmeticAndThePlansPrediction() throws IOException {
        Files.writeString(dir.resolve("config.json"), CONFIG);
        // The pool is the capacity each mode states; a prefill long enough that a preempted request's second one
        // stands out from a loaded machine's pauses.
        String engine = "{java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --port {port} --model-config {config} --device-memory-gib 1 --weights-gib 1.5"
                + " --kv-pool capacity --itl-ms 10 --prefill-us-per-token 50";
        Path exp = dir.resolve("surface.yaml");
        Files.writeString(exp, """
                experiment: surface
                model: /not/downloaded
                model_config: config.json
                weights_gib: 1.5
                hardware: {devices: 2, memory_gib: 1}
                context_pad: 100
                vars:
                  java: '%s'
                  cp: '%s'
                  config: '%s'
                load: {output_len: %d, num_prompts: 1, warmup: 0}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 65536, precision: 0.001, align: %d, max_launches: 12}
                  concurrency: [1, 2, 4]
                timeouts: {startup_s: 20, request_s: 60, shutdown_s: 3}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      %s --mode vllm --max-model-len {max_model_len} --tensor-parallel-size 2
                      --gpu-memory-utilization 0.9 --preempt
                  - name: sglang
                    engine: sglang
                    command: >-
                      %s --mode sglang --context-length {max_model_len} --tp-size 2 --mem-fraction-static 0.9
                """.formatted(
                        TestEngines.javaBin(),
                        TestEngines.classpath(),
                        dir.resolve("config.json"),
                        OUTPUT,
                        ALIGN,
                        engine,
                        engine));

        CliRun plan = CliRun.of("plan", exp.toString(), "--format", "json");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        Map<String, JsonNode> predicted = new HashMap<>();
        JSON.readTree(plan.out())
                .get("backends")
                .forEach(b -> predicted.put(b.get("backend").asString(), b));
        // vLLM: 1,228 blocks of 16 tokens (PlanThenRunIT); SGLang: a pool of 19,660 tokens.
        Map<String, Long> pools = Map.of("vllm", 1_228L * 16, "sglang", 19_660L);

        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("surface"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        for (String backend : pools.keySet()) {
            long pool = pools.get(backend);
            JsonNode plannedLevels = predicted.get(backend).get("surface");
            JsonNode measured = doc.get("frontier").get(backend).get("surface");
            assertThat(plannedLevels).as(backend).hasSize(2);
            assertThat(measured).as(backend).hasSize(2);
            for (int i = 0; i < 2; i++) {
                int n = i == 0 ? 2 : 4;
                long arithmetic = (pool / n - OUTPUT) / ALIGN * ALIGN;
                JsonNode planned = plannedLevels.get(i);
                JsonNode level = measured.get(i);
                assertThat(planned.get("concurrency").asInt()).isEqualTo(n);
                assertThat(planned.get("target").asLong())
                        .as(backend + " x" + n)
                        .isEqualTo(arithmetic);
                assertThat(planned.get("why").asString())
                        .isEqualTo(String.format("KV pool %,d / %d - %d output", pool, n, OUTPUT));
                assertThat(level.get("concurrency").asInt()).isEqualTo(n);
                assertThat(level.get("max_ok_target").asLong())
                        .as(backend + " x" + n + ": " + level)
                        .isEqualTo(arithmetic);
                assertThat(level.get("min_failed_target").asLong())
                        .as(backend + " x" + n + ": " + level)
                        .isEqualTo(arithmetic + ALIGN);
                assertThat(level.get("cause").asString()).isEqualTo("not_concurrent");
            }
            assertThat(doc.get("frontier").get(backend).get("predicted").get("surface"))
                    .as("results.json keeps the plan's map")
                    .isEqualTo(plannedLevels);
        }
        // Every server that came up stated what it holds at once.
        doc.get("scenarios").forEach(s -> {
            if (!s.get("success").asBoolean()) {
                return;
            }
            if (s.get("backend").asString().equals("vllm")) {
                assertThat(s.get("server")
                                .get("capacity")
                                .get("max_concurrency")
                                .asDouble())
                        .as("vLLM states its maximum concurrency")
                        .isPositive();
            }
            if (s.get("backend").asString().equals("sglang")) {
                assertThat(s.get("server")
                                .get("capacity")
                                .get("max_running_requests")
                                .asInt())
                        .as("SGLang states its running cap")
                        .isGreaterThanOrEqualTo(4);
            }
        });
    }
}
