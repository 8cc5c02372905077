package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Measurements faster than physics are named (docs/results.md, "% of roofline"): a stand-in engine that answers at
 * once, declared as a 70B model on an H100, is impossible at every step; a server that reports cached prompt tokens
 * gets a warning of its own.
 */
class RooflineIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    // A dense 70B shape (Llama 3 70B's): about 140 GFLOP a token, 71 ms for 1,000 tokens at the H100's FP8 peak.
    private static final String CONFIG = """
            {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 80, "hidden_size": 8192,
             "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 28672,
             "max_position_embeddings": 131072}""";

    @TempDir
    Path dir;

    private JsonNode run(String name, String engine, String engineArgs, CliRun[] out) throws IOException {
        return run(name, engine, engineArgs, "[1000, 4000, 16000]", 20, out);
    }

    private JsonNode run(String name, String engine, String engineArgs, String targets, int requestS, CliRun[] out)
            throws IOException {
        Files.writeString(dir.resolve("config.json"), CONFIG);
        Path exp = TestExperiments.write(
                dir,
                name,
                "  strategy: list\n  targets: " + targets + "\n",
                "  warmup: 0\n",
                "{startup_s: 20, request_s: " + requestS + ", shutdown_s: 3}",
                "model_config: config.json\nhardware: {accelerator: NVIDIA H100 80GB HBM3, devices: 1}\n",
                List.of(new TestExperiments.Backend("fast", engine, null, engineArgs)));
        CliRun r = CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString());
        out[0] = r;
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    @Test
    void anEngineThatAnswersAtOnceIsImpossibleAtEveryStep() throws IOException {
        CliRun[] r = new CliRun[1];
        // From 4,000 tokens the 70B floor is 0.28 s and more: at 1,000 it is 70 ms, which a cold first request on a
        // loaded machine took longer than (88 ms on CI), however instant the engine.
        JsonNode doc = run("instant", "vllm", "--mode vllm --prefill-us-per-token 0", "[4000, 8000, 16000]", 20, r);

        assertThat(doc.get("scenarios")).hasSize(3);
        for (JsonNode s : doc.get("scenarios")) {
            JsonNode roofline = s.get("roofline");
            assertThat(roofline.get("flag").asString()).as(s.toString()).isEqualTo("impossible");
            assertThat(roofline.get("percent").asDouble()).isGreaterThan(100);
            assertThat(roofline.get("assumption").asString()).isEqualTo("FP8 peak 1,979 TFLOPS x 1, linear+attention");
            assertThat(s.get("warnings").toString())
                    .contains("of roofline")
                    .contains("a prefix-cache hit, a truncated prompt, or a wrong hardware or model declaration");
        }
        assertThat(r[0].out()).contains("impossible").contains("warning: ");
        assertThat(r[0].out().lines().filter(l -> l.contains(" ok ")).filter(l -> l.contains("impossible")))
                .hasSize(3);
    }

    @Test
    void aTimeoutShorterThanAFewFloorsSaysSo() throws IOException {
        // At 16,000 tokens the 70B floor is 1.24 s at the H100's FP8 peak: a request_s of 1 s cannot hold a prefill.
        CliRun[] r = new CliRun[1];
        JsonNode doc = run("short", "vllm", "--mode vllm --prefill-us-per-token 200", "[16000]", 1, r);

        JsonNode step = doc.get("scenarios").get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("timeout");
        assertThat(step.get("error").asString())
                .startsWith("request failed: no complete answer within 1.0 s")
                .contains("timeouts.request_s 1 s is below what this hardware can do at this length: the prefill"
                        + " floor of 16,000 tokens is 1.2")
                .contains("set request_s from ctxprobe plan's floor (docs/plan.md)");
        assertThat(step.get("failure").get("detail").asString()).contains("below what this hardware can do");
    }

    @Test
    void cachedPromptTokensAreRecordedAndWarnedAbout() throws IOException {
        CliRun[] r = new CliRun[1];
        JsonNode doc = run("cached", "vllm", "--mode vllm --prefill-us-per-token 100 --fault prefix-cache-hit", r);

        JsonNode first = doc.get("scenarios").get(0);
        assertThat(first.get("requests").get(0).get("cached_tokens").asLong()).isEqualTo(1000 - 16);
        assertThat(first.get("warnings").toString())
                .contains("reported 984 cached prompt tokens in 1 measured request");
        assertThat(r[0].out()).contains("cached prompt tokens");
    }

    @Test
    void llamaCppReportsItsCacheInItsTimings() throws IOException {
        CliRun[] r = new CliRun[1];
        JsonNode doc = run(
                "cached_llama", "llamacpp", "--mode llamacpp --prefill-us-per-token 100 --fault prefix-cache-hit", r);

        assertThat(doc.get("scenarios")
                        .get(1)
                        .get("requests")
                        .get(0)
                        .get("cached_tokens")
                        .asLong())
                .isEqualTo(4000 - 16);
    }
}
