package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Source;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plain grouped-query model (Llama-3.1-8B's shape: 32 layers, 8 KV heads of 128, bf16, 131,072 positions) on
 * one or two 24 GiB devices with 15 GiB of weights: the KV memory sets the frontier on both engines.
 */
class FullAttentionTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    private BackendPrediction predict(String engine, String command, int devices) throws Exception {
        Files.writeString(dir.resolve("config.json"), """
                {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
                 "torch_dtype": "bfloat16"}
                """);
        Experiment e = Fixtures.parse(dir.resolve("llama.yaml"), """
                experiment: llama
                model: /not/here
                model_config: config.json
                weights_gib: 15
                hardware: {devices: %d, memory_gib: 24}
                sweep:
                  strategy: frontier
                  frontier: {min: 4096, max: 131072}
                backends:
                  - name: b
                    engine: %s
                    command: %s
                """.formatted(devices, engine, command));
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @Test
    void vllmFitsWholeBlocksOfItsAvailableMemory() throws Exception {
        BackendPrediction p = predict("vllm", "vllm serve {model} --max-model-len {max_model_len}", 1);

        // 32 layers x 8 heads x (128 + 128) x 2 B = 131,072 B per token, in blocks of 16 tokens.
        long available = Math.round(24 * GIB * 0.92) - 15 * GIB;
        long blocks = available / (16 * 131_072L);
        assertThat(p.kv().bytesPerToken()).isEqualTo(131_072.0);
        assertThat(p.kv().availableBytes()).isEqualTo(available);
        assertThat(p.kv().capacity()).isEqualTo(blocks * 16);
        assertThat(p.largestTarget()).isEqualTo(blocks * 16 - 1_024);
        assertThat(p.target()).isEqualTo((blocks * 16 - 1_024) / 256 * 256);
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("--gpu-memory-utilization");
            assertThat(i.value()).isEqualTo("0.92");
            assertThat(i.source()).isEqualTo(Source.DEFAULT);
        });
    }

    @Test
    void tensorParallelSplitsTheKvHeadsAndTheWeights() throws Exception {
        BackendPrediction one = predict("vllm", "vllm serve {model} --max-model-len {max_model_len}", 1);
        BackendPrediction two = predict("vllm", "vllm serve {model} -tp 2 --max-model-len {max_model_len}", 2);

        assertThat(two.kv().bytesPerToken()).isEqualTo(65_536.0);
        assertThat(two.kv().availableBytes()).isEqualTo(Math.round(24 * GIB * 0.92) - 15 * GIB / 2);
        assertThat(two.target()).isGreaterThan(2 * one.target());
    }

    @Test
    void tensorParallelBeyondTheDevicesPresentPredictsNothing() throws Exception {
        BackendPrediction p = predict("vllm", "vllm serve {model} -tp 4 --max-model-len {max_model_len}", 2);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.DEVICES);
        assertThat(p.summary()).contains("4 devices > 2 present");
    }

    @Test
    void sglangsPoolLeavesSevenTokensOfReserve() throws Exception {
        BackendPrediction p = predict(
                "sglang",
                "sglang serve --model-path {model} --context-length {max_model_len} --mem-fraction-static 0.85",
                1);

        long available = Math.round(24 * GIB * 0.85) - 15 * GIB;
        long pool = available / 131_072;
        assertThat(p.kv().capacity()).isEqualTo(pool);
        assertThat(p.largestTarget()).isEqualTo(pool - 7);
        assertThat(p.target()).isEqualTo((pool - 7) / 256 * 256);
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
    }

    @Test
    void aPadBelowSglangsReserveIsTheEnginesRule() throws Exception {
        Files.writeString(dir.resolve("config.json"), "{\"max_position_embeddings\": 131072}");
        Experiment e = Fixtures.parse(dir.resolve("pad.yaml"), """
                experiment: pad
                model: /not/here
                model_config: config.json
                context_pad: 4
                sweep: {strategy: list, targets: [4096]}
                backends:
                  - name: b
                    engine: sglang
                    command: sglang serve --context-length {max_model_len}
                """);
        BackendPrediction p = Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.ENGINE_RESERVE);
    }
}
