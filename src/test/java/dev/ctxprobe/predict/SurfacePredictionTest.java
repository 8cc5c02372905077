package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ByteVocab;
import dev.ctxprobe.embedded.GgufWriter;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.ServedCapacity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: the capacity map predicted from each engine's arithmetic, as {@code plan} prints it and as each level of
 * the search starts from what the single-prompt servers stated.
 */
class SurfacePredictionTest {

    @TempDir
    Path dir;

    private static ServedCapacity llama(long ctxSlot, int slots, boolean unified) {
        return new ServedCapacity(ctxSlot, null, null, slots, unified, null, null, null, null, null, List.of("log"));
    }

    private static Long target(int n, long single, ServedCapacity stated) {
        return SurfacePrediction.level(n, single, 16, 1, SurfacePrediction.Holds.of(stated))
                .target();
    }

    @Test
    void aUnifiedLlamaCacheIsSharedByTheRequests() {
        // -c 16384 -np 4 --kv-unified: every slot may use all 16,384 cells, the four together too.
        assertThat(target(2, 16_383, llama(16_384, 4, true))).isEqualTo(8_176);
        assertThat(target(4, 16_383, llama(16_384, 4, true))).isEqualTo(4_080);
    }

    @Test
    void aSplitLlamaCacheGivesEachSlotItsShare() {
        // -c 16384 -np 4: each slot holds 4,096, whatever the others do.
        assertThat(target(2, 4_095, llama(4_096, 4, false))).isEqualTo(4_080);
        assertThat(target(4, 4_095, llama(4_096, 4, false))).isEqualTo(4_080);
    }

    @Test
    void moreRequestsThanSlotsAreHeldAtNoLength() {
        BackendPrediction.Level eight =
                SurfacePrediction.level(8, 16_383, 16, 256, SurfacePrediction.Holds.of(llama(16_384, 4, true)));

        assertThat(eight.target()).isNull();
        assertThat(eight.why()).isEqualTo("more requests than 4 slots");
    }

    @Test
    void aPoolIsDividedAndWithoutAStatementTheFrontierIs() {
        ServedCapacity vllm = new ServedCapacity(null, null, 100_000L, null, null, null, null, null, null, null, null);
        assertThat(target(4, 90_000, vllm)).isEqualTo(24_984);
        assertThat(target(4, 90_000, null)).isEqualTo(22_500);
        assertThat(target(2, 10_000, vllm)).isEqualTo(10_000);
    }

    @Test
    void anSglangCapOnRunningRequestsIsMoreRequestsThanItRuns() {
        ServedCapacity sglang =
                new ServedCapacity(4_096L, 4_089L, 14_000L, null, null, null, null, null, null, null, null, 2, null);

        assertThat(SurfacePrediction.level(2, 3_840, 16, 256, SurfacePrediction.Holds.of(sglang)))
                .isEqualTo(new BackendPrediction.Level(
                        2, 3_840L, "the single-prompt frontier 3,840 (KV pool 14,000 / 2 - 16 output holds more)"));
        assertThat(SurfacePrediction.level(4, 3_840, 16, 256, SurfacePrediction.Holds.of(sglang)))
                .isEqualTo(new BackendPrediction.Level(4, null, "more requests than max_running_requests 2"));
    }

    @Test
    void theTargetIsAlignedDownAndTheArithmeticSaidInWords() {
        SurfacePrediction.Holds pool = new SurfacePrediction.Holds(14_000L, null, null, null, null);

        assertThat(SurfacePrediction.level(2, 13_000, 16, 256, pool))
                .isEqualTo(new BackendPrediction.Level(2, 6_912L, "KV pool 14,000 / 2 - 16 output"));
    }

    @Test
    void autoDoublesUpToWhatTheEngineStatesItHolds() {
        assertThat(SurfacePrediction.autoLevels(SurfacePrediction.Holds.of(llama(16_384, 4, true)), 256, 16, 1024))
                .containsExactly(2, 4);
        ServedCapacity sglang =
                new ServedCapacity(4_096L, 4_089L, 14_000L, null, null, null, null, null, null, null, null, 8, null);
        assertThat(SurfacePrediction.autoLevels(SurfacePrediction.Holds.of(sglang), 256, 16, 1024))
                .containsExactly(2, 4, 8);
        // A pool alone: as many as keep one align step and the output each, 14,000 / 272 = 51.
        SurfacePrediction.Holds pool = new SurfacePrediction.Holds(14_000L, null, null, null, null);
        assertThat(SurfacePrediction.autoLevels(pool, 256, 16, 1024)).containsExactly(2, 4, 8, 16, 32);
        assertThat(SurfacePrediction.autoBound(pool, 256, 16))
                .isEqualTo("up to KV pool 14,000 / (align 256 + 16 output)");
        assertThat(SurfacePrediction.autoLevels(pool, 256, 16, 8)).containsExactly(2, 4, 8);
        assertThat(SurfacePrediction.autoLevels(SurfacePrediction.Holds.UNKNOWN, 256, 16, 1024))
                .isEmpty();
    }

    private BackendPrediction plan(String engine, String command) throws Exception {
        Files.writeString(dir.resolve("config.json"), """
                {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
                 "torch_dtype": "bfloat16"}
                """);
        Experiment e = Fixtures.parse(dir.resolve("map.yaml"), """
                experiment: map
                model: /not/here
                model_config: config.json
                weights_gib: 15
                hardware: {devices: 1, memory_gib: 24}
                load: {output_len: 16}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 131072, align: 256}
                  concurrency: [1, 2, 4]
                backends:
                  - name: b
                    engine: %s
                    command: %s
                """.formatted(engine, command));
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @Test
    void vllmLikeDividesItsKvCacheAmongTheRequests() throws Exception {
        BackendPrediction p = plan("vllm", "vllm serve {model} --max-model-len {max_model_len}");

        long pool = p.kv().capacity();
        assertThat(p.surface())
                .containsExactly(
                        new BackendPrediction.Level(
                                2, (pool / 2 - 16) / 256 * 256, String.format("KV pool %,d / 2 - 16 output", pool)),
                        new BackendPrediction.Level(
                                4, (pool / 4 - 16) / 256 * 256, String.format("KV pool %,d / 4 - 16 output", pool)));
        assertThat(PlanFormat.text(p))
                .contains("capacity map (largest target held at once):\n    x2: "
                        + String.format("%,d (KV pool %,d / 2 - 16 output)", (pool / 2 - 16) / 256 * 256, pool));
    }

    @Test
    void vllmLikeRunsNoMoreThanMaxNumSeqs() throws Exception {
        BackendPrediction p = plan("vllm", "vllm serve {model} --max-model-len {max_model_len} --max-num-seqs 2");

        assertThat(p.surface().getLast())
                .isEqualTo(new BackendPrediction.Level(4, null, "more requests than max_num_seqs 2"));
    }

    @Test
    void sglangLikeDividesItsTokenPool() throws Exception {
        BackendPrediction p =
                plan("sglang", "sglang serve --context-length {max_model_len} --mem-fraction-static 0.85");

        long pool = p.kv().capacity();
        assertThat(p.surface().getFirst())
                .isEqualTo(new BackendPrediction.Level(
                        2, (pool / 2 - 16) / 256 * 256, String.format("KV pool %,d / 2 - 16 output", pool)));
    }

    @Test
    void sglangLikeRunsNoMoreThanMaxRunningRequests() throws Exception {
        BackendPrediction p = plan(
                "sglang",
                "sglang serve --context-length {max_model_len} --mem-fraction-static 0.85 --max-running-requests 3");

        assertThat(p.surface().getLast())
                .isEqualTo(new BackendPrediction.Level(4, null, "more requests than max_running_requests 3"));
    }

    private BackendPrediction llamaPlan(String flags) throws Exception {
        Path gguf = dir.resolve("tiny.gguf");
        GgufWriter.write(
                new ModelShape("tiny", 4, 128, 4, 2, 256, 65_536, ByteVocab.SIZE), GgufWriter.WeightType.F32, 7, gguf);
        Experiment e = Fixtures.parse(dir.resolve("llama.yaml"), """
                experiment: llama
                model: tiny
                vars: {gguf: "%s"}
                load: {output_len: 16}
                sweep:
                  strategy: frontier
                  frontier: {min: 256, max: 65536, align: 256}
                  concurrency: [1, 2, 4, 8]
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m {gguf} %s --port {port}
                """.formatted(gguf, flags));
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @Test
    void planSaysHowAutoWillBeResolved() throws Exception {
        Path gguf = dir.resolve("tiny.gguf");
        GgufWriter.write(
                new ModelShape("tiny", 4, 128, 4, 2, 256, 65_536, ByteVocab.SIZE), GgufWriter.WeightType.F32, 7, gguf);
        Experiment e = Fixtures.parse(dir.resolve("auto.yaml"), """
                experiment: auto
                model: tiny
                vars: {gguf: "%s"}
                load: {output_len: 16}
                sweep:
                  strategy: frontier
                  frontier: {min: 256, max: 65536, align: 256}
                  concurrency: auto
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m {gguf} -c 16384 -np 4 --kv-unified --port {port}
                """.formatted(gguf));
        BackendPrediction p = Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);

        assertThat(p.surface()).extracting(BackendPrediction.Level::concurrency).containsExactly(2, 4);
        assertThat(p.assumptions())
                .contains("sweep.concurrency auto: up to 4 slots, as predicted here; the run takes the levels from"
                        + " what its first server states");
    }

    @Test
    void llamaCppUnifiedSharesItsCellsAndSplitGivesEachSlotItsShare() throws Exception {
        BackendPrediction unified = llamaPlan("-c 16384 -np 4 --kv-unified");
        BackendPrediction split = llamaPlan("-c 16384 -np 4");

        assertThat(unified.target()).isEqualTo(16_128);
        assertThat(unified.surface())
                .containsExactly(
                        new BackendPrediction.Level(2, 7_936L, "KV pool 16,384 / 2 - 16 output"),
                        new BackendPrediction.Level(4, 3_840L, "KV pool 16,384 / 4 - 16 output"),
                        new BackendPrediction.Level(8, null, "more requests than 4 slots"));
        assertThat(split.target()).isEqualTo(3_840);
        assertThat(split.surface())
                .containsExactly(
                        new BackendPrediction.Level(
                                2, 3_840L, "the single-prompt frontier 3,840 (each slot holds 4,096 - 16 output)"),
                        new BackendPrediction.Level(
                                4, 3_840L, "the single-prompt frontier 3,840 (each slot holds 4,096 - 16 output)"),
                        new BackendPrediction.Level(8, null, "more requests than 4 slots"));
    }
}
