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
 * {@code ctxprobe plan}, then {@code ctxprobe run} of the same file: the frontier predicted before any launch is the
 * one the search finds and proves, in two launches, and results.json keeps the prediction beside it. The test
 * engine's vLLM and SGLang modes size their KV cache from the same model config and machine as the real engines do.
 */
class PlanThenRunIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** 4 layers, 8 KV heads of 128, bf16: 16,384 B of KV a token, 8,192 B on each of two tensor-parallel ranks. */
    private static final String CONFIG = """
            {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4,
             "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
             "max_position_embeddings": 1048576, "torch_dtype": "bfloat16"}
            """;

    @TempDir
    Path dir;

    @Test
    void thePredictedFrontierIsTheMeasuredOneOnBothEngines() throws IOException {
        Files.writeString(dir.resolve("config.json"), CONFIG);
        String engine = "{java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --port {port} --model-config {config} --device-memory-gib 1 --weights-gib 1.5";
        Path exp = dir.resolve("pair.yaml");
        Files.writeString(exp, """
                experiment: pair
                model: /not/downloaded
                model_config: config.json
                weights_gib: 1.5
                hardware: {devices: 2, memory_gib: 1}
                context_pad: 100
                vars:
                  java: '%s'
                  cp: '%s'
                  config: '%s'
                load: {output_len: 1, num_prompts: 1, warmup: 0}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 65536, precision: 0.001, align: 64, max_launches: 12}
                timeouts: {startup_s: 20, request_s: 20, shutdown_s: 3}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      %s --mode vllm --max-model-len {max_model_len} --tensor-parallel-size 2
                      --gpu-memory-utilization 0.9
                  - name: sglang
                    engine: sglang
                    command: >-
                      %s --mode sglang --context-length {max_model_len} --tp-size 2 --mem-fraction-static 0.9
                """.formatted(
                        TestEngines.javaBin(), TestEngines.classpath(), dir.resolve("config.json"), engine, engine));

        CliRun plan = CliRun.of("plan", exp.toString(), "--format", "json");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        Map<String, JsonNode> predicted = new HashMap<>();
        JSON.readTree(plan.out())
                .get("backends")
                .forEach(b -> predicted.put(b.get("backend").asString(), b));

        // vLLM: round(1 GiB x 0.9) - 1.5 GiB / 2 ranks = 161,061,274 B hold 1,228 blocks of 16 x 8,192 B, so
        // max_model_len 19,648 at most: target + 100 within it is 19,548, aligned down to 64.
        assertThat(predicted.get("vllm").get("target").asLong()).isEqualTo(19_520);
        assertThat(predicted.get("vllm").get("bound").asString()).isEqualTo("kv_memory");
        // SGLang: a pool of 19,660 tokens of 8,192 B; the largest prompt is 19,660 - 7, aligned down to 64.
        assertThat(predicted.get("sglang").get("target").asLong()).isEqualTo(19_648);
        assertThat(predicted.get("sglang").get("bound").asString()).isEqualTo("kv_memory");

        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("pair"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        for (String backend : new String[] {"vllm", "sglang"}) {
            JsonNode f = doc.get("frontier").get(backend);
            long target = predicted.get(backend).get("target").asLong();
            assertThat(f.get("max_ok_target").asLong()).as(backend).isEqualTo(target);
            assertThat(f.get("min_failed_target").asLong()).as(backend).isEqualTo(target + 64);
            assertThat(f.get("launches").asInt()).as(backend).isEqualTo(2);
            assertThat(f.get("predicted").get("target").asLong()).as(backend).isEqualTo(target);
            assertThat(f.get("predicted").get("inputs").findValuesAsString("where"))
                    .as(backend)
                    .contains("model_config", "weights_gib", "hardware.memory_gib");
        }
        assertThat(doc.get("config").get("frontier").get("start").asString()).isEqualTo("plan");
    }
}
