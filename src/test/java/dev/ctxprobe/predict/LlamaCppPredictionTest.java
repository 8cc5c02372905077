package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ByteVocab;
import dev.ctxprobe.embedded.GgufWriter;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.Source;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * llama-server, predicted from a GGUF that ctxprobe writes (4 layers, 2 KV heads of 32, training context 8,192):
 * the expected numbers follow the current build's rules (n_ctx padded to 256, slots of n_ctx / np without a unified
 * KV cache, a slot capped at the training context, a prompt refused at n_tokens >= slot n_ctx). A build before the
 * 256 padding (b4748 pads to 32) gives 5,023 instead of 5,119 for -c 5000.
 */
class LlamaCppPredictionTest {
    private static final long TRAIN = 8_192;

    @TempDir
    static Path dir;

    private static Path gguf;

    @BeforeAll
    static void writeModel() throws Exception {
        gguf = dir.resolve("tiny.gguf");
        GgufWriter.write(
                new ModelShape("tiny", 4, 128, 4, 2, 256, TRAIN, ByteVocab.SIZE), GgufWriter.WeightType.F32, 7, gguf);
    }

    private static BackendPrediction predict(String flags, long align) throws Exception {
        Experiment e = Fixtures.parse(dir.resolve("llama.yaml"), """
                experiment: llama
                model: tiny
                vars: {gguf: "%s"}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 65536, align: %d}
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m {gguf} %s --port {port}
                """.formatted(gguf, align, flags));
        return Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);
    }

    @ParameterizedTest(name = "{0} align {1}: {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                // n_ctx 5,000 padded to 5,120; one slot; the largest prompt is 5,119.
                "-c 5000 -np 1                    | 1   | 5119 | CONTEXT_FLAG",
                "-c 5000 -np 1                    | 256 | 4864 | CONTEXT_FLAG",
                // Two slots without a unified cache: 8,192 / 2 = 4,096 each.
                "-c 8192 -np 2 --no-kv-unified    | 1   | 4095 | ENGINE_SLOTS",
                // 5,120 / 2 = 2,560, already a multiple of 256.
                "-c 5000 -np 2 --no-kv-unified    | 1   | 2559 | ENGINE_SLOTS",
                // A unified cache lets one slot use all of n_ctx.
                "-c 8192 -np 2 --kv-unified       | 1   | 8191 | CONTEXT_FLAG",
                // -c follows the target; the slot is capped at the training context 8,192.
                "-c {max_model_len}               | 1   | 8191 | MODEL_CONFIG",
                "-c {max_model_len}               | 256 | 7936 | MODEL_CONFIG",
                // No -c: llama-server's default 0 takes the training context.
                "-np 1                            | 1   | 8191 | MODEL_CONFIG",
            })
    void predictionsFollowLlamaServersRules(String flags, long align, long expected, Bound bound) throws Exception {
        BackendPrediction p = predict(flags.strip(), align);

        assertThat(p.target()).as(p.summary()).isEqualTo(expected);
        assertThat(p.bound()).isEqualTo(bound);
        assertThat(p.missing()).extracting(Missing::name).doesNotContain("GGUF model");
    }

    @Test
    void theKvCacheIsSizedFromTheGgufHeader() throws Exception {
        BackendPrediction p = predict("-c 8192 -np 1", 256);

        // 4 layers x (n_embd_k_gqa 64 + n_embd_v_gqa 64) x 2 B (f16) = 1,024 B per cell, 8,192 cells.
        assertThat(p.arithmetic()).anySatisfy(l -> assertThat(l).contains("= 1,024 B per cell; x n_ctx 8,192"));
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("n_ctx_train");
            assertThat(i.value()).isEqualTo("8,192");
            assertThat(i.source()).isEqualTo(Source.FILE);
        });
    }

    @Test
    void aModelFromTheHubIsNamedAsMissing() throws Exception {
        Experiment e = Fixtures.parse(dir.resolve("hub.yaml"), """
                experiment: hub
                model: tiny
                sweep: {strategy: list, targets: [4096]}
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -hf org/model -c {max_model_len} --port {port}
                """);
        BackendPrediction p = Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.UNKNOWN);
        assertThat(p.missing())
                .extracting(Missing::how)
                .anySatisfy(h -> assertThat(h).contains("-hf org/model"));
    }
}
