package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.Source;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What is not known is named, and what is known still gives its bound; nothing missing is guessed. */
class MissingInputsTest {
    @TempDir
    Path dir;

    private Experiment experiment(String extra, String engine, String command) throws Exception {
        return Fixtures.parse(dir.resolve("missing.yaml"), """
                experiment: missing
                model: /no/such/model
                %s
                sweep:
                  strategy: frontier
                  frontier: {min: 4096, max: 1048576}
                backends:
                  - name: b
                    engine: %s
                    command: %s
                """.formatted(extra, engine, command));
    }

    private static BackendPrediction only(Experiment e) {
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @Test
    void withNoConfigAndNoMemoryEachMissingInputIsNamedAndNoLimitIsClaimed() throws Exception {
        BackendPrediction p = only(experiment("", "vllm", "vllm serve {model} --max-model-len {max_model_len}"));

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.UNKNOWN);
        assertThat(p.missing())
                .extracting(Missing::name)
                .containsExactly("model config", "memory per device", "weights");
        assertThat(p.missing().getFirst().how()).contains("/no/such/model").contains("model_config");
        assertThat(p.summary()).contains("no limit is known").contains("model config");
    }

    @Test
    void withAConfigButNoMemoryTheConfigBoundIsStillGiven() throws Exception {
        String config = Fixtures.V4_FLASH.toAbsolutePath().toString();
        BackendPrediction p = only(experiment(
                "model_config: \"" + config + "\"", "vllm", "vllm serve {model} --max-model-len {max_model_len}"));

        assertThat(p.target()).isEqualTo(1_047_552);
        assertThat(p.bound()).isEqualTo(Bound.MODEL_CONFIG);
        assertThat(p.kv()).isNull();
        assertThat(p.missing()).extracting(Missing::name).containsExactly("memory per device", "weights");
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("model config");
            assertThat(i.source()).isEqualTo(Source.EXPERIMENT);
            assertThat(i.where()).isEqualTo("model_config");
        });
    }

    @Test
    void theModelFoldersOwnConfigAndSafetensorsIndexAreReadWhenPresent() throws Exception {
        Path model = Files.createDirectories(dir.resolve("model"));
        Files.copy(Fixtures.resource("deepseek-v3.2.config.json"), model.resolve("config.json"));
        Files.writeString(
                model.resolve("model.safetensors.index.json"),
                "{\"metadata\": {\"total_size\": 689000000000}, \"weight_map\": {}}");
        Experiment e = Fixtures.parse(dir.resolve("folder.yaml"), """
                experiment: folder
                model: %s
                hardware: {devices: 8, memory_gib: 140}
                sweep: {strategy: list, targets: [65536]}
                backends:
                  - name: b
                    engine: sglang
                    command: sglang serve --model-path {model} --tp 8 --context-length {max_model_len} --mem-fraction-static 0.88
                """.formatted(model));
        BackendPrediction p = only(e);

        assertThat(p.target()).isEqualTo(163_840 - 1_024);
        assertThat(p.missing()).isEmpty();
        assertThat(p.inputs())
                .anySatisfy(i -> {
                    assertThat(i.name()).isEqualTo("weights");
                    assertThat(i.source()).isEqualTo(Source.FILE);
                    assertThat(i.where()).endsWith("model.safetensors.index.json metadata.total_size");
                })
                .anySatisfy(i -> {
                    assertThat(i.name()).isEqualTo("memory per device");
                    assertThat(i.source()).isEqualTo(Source.EXPERIMENT);
                });
        assertThat(p.kv()).isNotNull();
    }

    @Test
    void aDeclaredConfigThatCannotBeReadIsNamedWithTheReason() throws IOException, Exception {
        Files.writeString(dir.resolve("broken.json"), "{ not json");
        BackendPrediction p = only(
                experiment("model_config: broken.json", "sglang", "sglang serve --context-length {max_model_len}"));

        assertThat(p.missing()).anySatisfy(m -> {
            assertThat(m.name()).isEqualTo("model config");
            assertThat(m.how()).contains("broken.json").contains("not valid JSON");
        });
        assertThat(p.missing()).extracting(Missing::name).contains("--mem-fraction-static");
    }

    @Test
    void anEngineWhoseMemoryIsNotModelledFallsBackToTheConfigBoundAndSaysSo() throws Exception {
        String config = Fixtures.V4_FLASH.toAbsolutePath().toString();
        BackendPrediction p = only(experiment(
                "model_config: \"" + config + "\"", "trtllm", "trtllm-serve {model} --max_seq_len {max_model_len}"));

        assertThat(p.target()).isEqualTo(1_047_552);
        assertThat(p.bound()).isEqualTo(Bound.MODEL_CONFIG);
        assertThat(p.assumptions()).anySatisfy(a -> assertThat(a).contains("not modelled for trtllm"));
    }

    @Test
    void aModelWhoseLayersAreNotModelledFallsBackToTheConfigBoundAndSaysSo() throws Exception {
        Files.writeString(dir.resolve("hybrid.json"), """
                {"architectures": ["Qwen3NextForCausalLM"], "num_hidden_layers": 4, "num_attention_heads": 16,
                 "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 262144,
                 "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"]}
                """);
        BackendPrediction p = only(experiment(
                "model_config: hybrid.json\nhardware: {memory_gib: 80}\nweights_gib: 150",
                "vllm",
                "vllm serve {model} --max-model-len {max_model_len}"));

        assertThat(p.target()).isEqualTo(262_144 - 1_024);
        assertThat(p.bound()).isEqualTo(Bound.MODEL_CONFIG);
        assertThat(p.kv()).isNull();
        assertThat(p.assumptions()).anySatisfy(a -> assertThat(a).contains("linear_attention"));
    }

    @Test
    void aRunningEndpointIsNotPredicted() throws Exception {
        Experiment e = Fixtures.parse(dir.resolve("endpoint.yaml"), """
                experiment: endpoint
                sweep: {strategy: list, targets: [4096]}
                backends:
                  - name: remote
                    engine: openai
                    port: 8000
                """);
        BackendPrediction p = only(e);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.UNKNOWN);
        assertThat(p.summary()).contains("already running");
    }
}
