package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * vLLM's refusal seen in a user's log (issue 44376, quoted in engines/vllm-sglang-current.md): "To serve at least one
 * request with the model's max seq len (30000), (6.66 GiB KV cache is needed, which is larger than the available KV
 * cache memory (5.44 GiB). Based on the available memory, the estimated maximum model length is 13528."
 *
 * <p>The log names neither the model nor max_num_batched_tokens. Its two points are not proportional (5.44 GiB
 * would hold 24,500 tokens at 6.66 GiB per 30,000): they imply about 79.5 kB per token plus a fixed per-request part
 * of about 4.44 GiB, the signature of sliding-window layers. Assumed here: a Gemma-3-27B-shaped hybrid (62 layers,
 * 10 full-attention and 52 with a 1,024-token window, 16 KV heads of 128, bf16) and --max-num-batched-tokens 10000;
 * the available memory is the log's own 5.44 GiB, given as --kv-cache-memory-bytes. That gives 81,920 B per token
 * and a 4.38 GiB fixed part, and both figures of the log within 5%.
 */
class VllmRefusalTest {
    private static final double GIB = 1L << 30;
    private static final long AVAILABLE = Math.round(5.44 * GIB);

    private static final String CONFIG = """
            {
              "architectures": ["Gemma3ForCausalLM"],
              "model_type": "gemma3_text",
              "num_hidden_layers": 62,
              "hidden_size": 5376,
              "num_attention_heads": 32,
              "num_key_value_heads": 16,
              "head_dim": 128,
              "sliding_window": 1024,
              "sliding_window_pattern": 6,
              "max_position_embeddings": 131072,
              "torch_dtype": "bfloat16"
            }
            """;

    @TempDir
    Path dir;

    private BackendPrediction predict(String maxModelLen) throws IOException, ExperimentError {
        return predict(maxModelLen, AVAILABLE);
    }

    private BackendPrediction predict(String maxModelLen, long available) throws IOException, ExperimentError {
        Files.writeString(dir.resolve("config.json"), CONFIG);
        Path file = dir.resolve("refusal.yaml");
        Experiment e = Fixtures.parse(file, """
                experiment: refusal
                model: /not/here
                model_config: config.json
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 131072}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      vllm serve {model} --max-model-len %s --kv-cache-memory-bytes %d
                      --max-num-batched-tokens 10000 --port {port}
                """.formatted(maxModelLen, available));
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @Test
    void bothFiguresOfTheLogComeFromOneSetOfInputsWithinFivePercent() throws Exception {
        BackendPrediction p = predict("30000");

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
        KvFit kv = p.kv();
        assertThat(kv.length()).isEqualTo(30_000);
        assertThat(kv.availableBytes()).isEqualTo(AVAILABLE);
        assertThat(kv.neededBytes() / GIB).isCloseTo(6.66, within(6.66 * 0.05));
        assertThat((double) kv.capacity()).isCloseTo(13_528, within(13_528 * 0.05));
        // Exactly: 10 x 30,000 x 8,192 B + 52 x (cdiv(1,023 + 10,000, 16) + 1) x 16 x 8,192 B = 6.67 GiB, and the
        // largest length that fits is 868 blocks of 16 = 13,888.
        assertThat(kv.neededBytes()).isEqualTo(7_160_463_360L);
        assertThat(kv.capacity()).isEqualTo(13_888);
        assertThat(p.summary()).contains("6.67 GiB needed > 5.44 GiB available");
        assertThat(p.arithmetic()).anySatisfy(l -> assertThat(l).contains("estimated maximum model length: 13,888"));

        // The per-token and fixed parts the two points of the log imply, against the assumed model's.
        double logPerToken = (6.66 - 5.44) * GIB / (30_000 - 13_528);
        double logFixed = 6.66 * GIB - 30_000 * logPerToken;
        assertThat(kv.bytesPerToken()).isEqualTo(81_920.0).isCloseTo(logPerToken, within(logPerToken * 0.05));
        assertThat((double) kv.fixedBytes()).isCloseTo(logFixed, within(logFixed * 0.05));
    }

    @Test
    void aTemplatedLengthPutsTheFrontierAtTheEstimateLessThePad() throws Exception {
        BackendPrediction p = predict("{max_model_len}");

        // max_model_len = target + 1,024 must stay within 13,888: target 12,864, aligned down to 256.
        assertThat(p.largestTarget()).isEqualTo(13_888 - 1_024);
        assertThat(p.target()).isEqualTo(12_800);
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
    }

    @Test
    void autoFitWithMemoryForNotEvenOneBlockPredictsNothing() throws Exception {
        BackendPrediction p = predict("auto", 1 << 20);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
        assertThat(p.summary()).contains("Cannot auto-fit");
    }

    @Test
    void autoFitLeavesTheEngineToFitTheLengthAndThePromptRuleDoesTheRest() throws Exception {
        BackendPrediction p = predict("auto");

        // vLLM fits max_model_len to 13,888; a prompt plus one output token must fit it: 13,887, aligned 13,824.
        assertThat(p.largestTarget()).isEqualTo(13_887);
        assertThat(p.target()).isEqualTo(13_824);
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
    }
}
