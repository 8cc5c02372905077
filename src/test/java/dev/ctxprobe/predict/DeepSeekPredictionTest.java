package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.Source;
import org.junit.jupiter.api.Test;

/**
 * The H200 seed's experiment with the real DeepSeek configs: both engines are bounded by the model's own limit,
 * which is what the seeds' failures at 1,048,576 + 1,024 were (engines/vllm-sglang-current.md).
 */
class DeepSeekPredictionTest {
    private static final String H200 = "experiments/dsv4-h200.yaml";

    @Test
    void deepSeekV4IsConfigBoundOnBothEnginesWithTheMemoryItsHardwareNameStates() throws ExperimentError {
        Experiment e = Fixtures.experiment(H200);
        Prediction plan = Predictor.plan(e, PredictInputs.none().withModelConfig(Fixtures.V4_FLASH), Engines::sizing);

        for (String backend : new String[] {"sglang", "vllm"}) {
            BackendPrediction p = Fixtures.backend(plan, backend);
            assertThat(p.target()).as(backend).isEqualTo(1_047_552L);
            assertThat(p.bound()).as(backend).isEqualTo(Bound.MODEL_CONFIG);
            assertThat(p.summary()).contains("1,048,576").contains("max_position_embeddings");
            // The memory comes from the declared hardware.name '8x NVIDIA H200 143GB' (143 x 1,000 MiB).
            assertThat(p.missing()).extracting(Missing::name).containsExactly("weights");
            assertThat(p.inputs()).anySatisfy(i -> {
                assertThat(i.name()).isEqualTo("memory per device");
                assertThat(i.value()).startsWith("139.65 GiB");
                assertThat(i.where()).isEqualTo("hardware.name '8x NVIDIA H200 143GB'");
            });
            assertThat(p.inputs())
                    .anySatisfy(i -> assertThat(i.name()).isEqualTo("model config"))
                    .anySatisfy(i -> {
                        assertThat(i.name()).isEqualTo("context_pad");
                        assertThat(i.value()).isEqualTo("1,024");
                    });
        }
    }

    @Test
    void deepSeekV4StaysConfigBoundWhenTheMemoryIsKnownAndTheKvArithmeticIsTheEnginesOwn() throws ExperimentError {
        Experiment e = Fixtures.experiment(H200);
        // The seed's machine: 8 x H200 (143,771 MiB each, about 140 GiB). The checkpoint's size is not in the
        // trimmed config: 160 GiB is assumed for it, far from mattering at these memory sizes.
        PredictInputs inputs = PredictInputs.none()
                .withModelConfig(Fixtures.V4_FLASH)
                .withHardware(8, 140.0)
                .withWeightsGib(160.0);
        Prediction plan = Predictor.plan(e, inputs, Engines::sizing);

        BackendPrediction sglang = Fixtures.backend(plan, "sglang");
        assertThat(sglang.target()).isEqualTo(1_047_552L);
        assertThat(sglang.bound()).isEqualTo(Bound.MODEL_CONFIG);
        // DSV4PoolConfigurator._get_bytes_per_full_token with SGLang's DeepSeek-V4 swa_full_tokens_ratio 0.1:
        // 0.1 x (43 x 584 + 8/128 x (8192 + 2048) x 21) + 584 x 21/4 + 584 x 20/128 + 132 x 21/4 = 7,705.45 B.
        assertThat(sglang.kv().bytesPerToken()).isCloseTo(7_705.45, within(1e-6));
        assertThat(sglang.kv().capacity()).isGreaterThan(1_048_576L);
        assertThat(sglang.missing()).isEmpty();
        assertThat(sglang.arithmetic()).anySatisfy(l -> assertThat(l).contains("prompt 1,047,552 <= context_length"));

        BackendPrediction vllm = Fixtures.backend(plan, "vllm");
        assertThat(vllm.target()).isEqualTo(1_047_552L);
        assertThat(vllm.bound()).isEqualTo(Bound.MODEL_CONFIG);
        // Per 256-token block: 21 x 37,440 B (64 latents, padded to 576 B) + 20 x 1,728 B (2 latents) + 21 x 8,640 B
        // (64 indexer keys) = 1,002,240 B, i.e. 3,915 B per token; the 128-token windows are a fixed part.
        assertThat(vllm.kv().bytesPerToken()).isCloseTo(3_915.0, within(1e-9));
        assertThat(vllm.kv().neededBytes()).isLessThan(vllm.kv().availableBytes());
        assertThat(vllm.kv().capacity()).isGreaterThan(1_048_576L);
        assertThat(vllm.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("--gpu-memory-utilization");
            assertThat(i.value()).isEqualTo("0.90");
            assertThat(i.source()).isEqualTo(Source.FLAG);
        });
    }

    @Test
    void deepSeekV32GivesTheSameKindOfAnswerAtItsOwnLimit() throws ExperimentError {
        Experiment e = Fixtures.experiment(H200);
        // 671 B parameters in fp8: about 642 GiB of weights, 80 GiB per rank.
        PredictInputs inputs = PredictInputs.none()
                .withModelConfig(Fixtures.resource("deepseek-v3.2.config.json"))
                .withHardware(8, 140.0)
                .withWeightsGib(642.0);
        Prediction plan = Predictor.plan(e, inputs, Engines::sizing);
        for (String backend : new String[] {"sglang", "vllm"}) {
            BackendPrediction p = Fixtures.backend(plan, backend);
            assertThat(p.target()).as(backend).isEqualTo(163_840L - 1_024);
            assertThat(p.bound()).as(backend).isEqualTo(Bound.MODEL_CONFIG);
            assertThat(p.summary()).contains("163,840");
        }
        // vLLM with --kv-cache-dtype fp8: fp8_ds_mla 656 B + indexer 132 B per layer, 61 layers = 48,068 B per token.
        assertThat(Fixtures.backend(plan, "vllm").kv().bytesPerToken()).isEqualTo(48_068.0);
    }

    @Test
    void theSeedsLastTargetIsFlaggedAsAboveTheModelsOwnLimit() throws ExperimentError {
        Experiment e = Fixtures.experiment(H200);
        var warnings = Predictor.unreachableTargets(
                e, PredictInputs.none().withModelConfig(Fixtures.V4_FLASH), Engines::sizing);

        assertThat(warnings).extracting(TargetWarning::backend).containsExactly("sglang", "vllm");
        for (TargetWarning w : warnings) {
            assertThat(w.path()).isEqualTo("sweep.targets[8]");
            assertThat(w.target()).isEqualTo(1_048_576L);
            assertThat(w.message())
                    .contains("1,049,600")
                    .contains("1,048,576")
                    .contains("the largest target the model allows is 1,047,552");
        }
    }

    @Test
    void targetsWithinTheModelsLimitRaiseNoWarning() throws ExperimentError {
        Experiment e = Fixtures.experiment(H200);
        var warnings = Predictor.unreachableTargets(
                e,
                PredictInputs.none().withModelConfig(Fixtures.resource("deepseek-v3.2.config.json")),
                Engines::sizing);
        // V3.2's limit is 163,840: every target from 262,144 up is above it, 65,536 and 131,072 are not.
        assertThat(warnings).extracting(TargetWarning::path).doesNotContain("sweep.targets[0]", "sweep.targets[1]");
        assertThat(warnings).hasSize(2 * 7);
    }
}
