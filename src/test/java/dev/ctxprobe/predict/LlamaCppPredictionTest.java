package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ByteVocab;
import dev.ctxprobe.embedded.GgufWriter;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.hardware.HostMemory;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.Source;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
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
        return predict(flags, align, PredictInputs.none());
    }

    private static BackendPrediction predict(String flags, long align, PredictInputs inputs) throws Exception {
        return predict("llama-server", flags, align, inputs);
    }

    private static BackendPrediction predict(String program, String flags, long align, PredictInputs inputs)
            throws Exception {
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
                    command: %s -m {gguf} %s --port {port}
                """.formatted(gguf, align, program, flags));
        return Predictor.predict(e, e.backends().getFirst(), inputs, Engines::sizing);
    }

    @Test
    void oneSlotIsOneSlotInTheArithmetic() throws Exception {
        BackendPrediction p = predict("-c 4096 -np 1 --no-kv-unified", 1);

        assertThat(p.arithmetic())
                .anySatisfy(l -> assertThat(l).contains("; 1 slot without a unified KV cache: n_ctx_seq = 4,096"))
                .noneSatisfy(l -> assertThat(l).contains("1 slots"));
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
                // YaRN scaling raises the cap to the original context times the scale; linear scaling does not.
                "-c {max_model_len} -np 1 --rope-scaling yarn --rope-scale 2 | 1 | 16383 | MODEL_CONFIG",
                "-c {max_model_len} -np 1 --rope-scaling yarn --yarn-orig-ctx 4096 --rope-scale 4 | 1 | 16383 | MODEL_CONFIG",
                "-c {max_model_len} -np 1 --rope-scale 2 | 1 | 8191 | MODEL_CONFIG",
                // A quantized V cache with flash attention sizes like any other.
                "-c 5000 -np 1 -ctk q8_0 -ctv q8_0 -fa on | 1 | 5119 | CONTEXT_FLAG",
                // Two slots of a templated -c (target + context_pad 1,024) round twice: target 1,024 (n_ctx 2,048,
                // slots of 1,024) fails while 1,025 to 1,279 (n_ctx 2,304, slots of 1,152 padded to 1,280) fit.
                "-c {max_model_len} -np 2         | 1   | 1279 | ENGINE_SLOTS",
            })
    void predictionsFollowLlamaServersRules(String flags, long align, long expected, Bound bound) throws Exception {
        BackendPrediction p = predict(flags.strip(), align);

        assertThat(p.target()).as(p.summary()).isEqualTo(expected);
        assertThat(p.bound()).isEqualTo(bound);
        assertThat(p.missing()).extracting(Missing::name).doesNotContain("GGUF model");
    }

    @Test
    void aQuantizedVCacheWithoutFlashAttentionCannotStart() throws Exception {
        BackendPrediction p = predict("-c 8192 -np 1 -ctk q8_0 -ctv q8_0 -fa off", 256);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.ENGINE_REFUSES);
        assertThat(p.summary()).startsWith("the server cannot start: ").contains("pass -fa on, or keep -ctv f16");

        BackendPrediction unsaid = predict("-c 8192 -np 1 -ctv q8_0", 256);
        assertThat(unsaid.target()).isEqualTo(7936);
        assertThat(unsaid.assumptions()).anySatisfy(a -> assertThat(a).contains("needs flash attention"));
    }

    @Test
    void aRuleThatIsNotMonotonicIsSaidAndItsLargestTargetGiven() throws Exception {
        BackendPrediction p = predict("-c {max_model_len} -np 2", 1);

        assertThat(p.target()).isEqualTo(1279);
        assertThat(p.summary()).contains("not monotonic").contains("target 1,024 does not fit while 1,025 does");
    }

    /** A llama-server that answers --version as b4748 did, and nothing else. */
    private static Path olderServer() throws Exception {
        return server(LlamaCppModel.OLDER_BUILD);
    }

    /** A llama-server that answers --version as build {@code build} does, and nothing else. */
    private static Path server(long build) throws Exception {
        Path program = dir.resolve("b" + build + "/llama-server");
        Files.createDirectories(program.getParent());
        Files.writeString(
                program,
                "#!/bin/sh\necho 'version: " + build + " (d07c6213)' >&2\necho 'built with cc for x86_64' >&2\n");
        program.toFile().setExecutable(true);
        return program;
    }

    /**
     * Each rule change at its own first build (docs/engines.md#which-build-has-which-rule): the build just below it
     * follows the older rule, the first build the new one.
     */
    @ParameterizedTest(name = "b{0} {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                // The cap at the training context, PR #16736: b6924 serves past 8,192, b6925 caps the slot.
                "6924 | -c 16384 -np 1                 | 16383 | CONTEXT_FLAG",
                "6925 | -c 16384 -np 1                 | 8191  | MODEL_CONFIG",
                // The 256 padding, PR #17046: -c 5000 is 5,024 below it, 5,120 from it; slots are padded too.
                "6925 | -c 5000 -np 1                  | 5023  | CONTEXT_FLAG",
                "6926 | -c 5000 -np 1                  | 5119  | CONTEXT_FLAG",
                "6925 | -c 8192 -np 3                  | 2729  | ENGINE_SLOTS",
                "6926 | -c 8192 -np 3                  | 2815  | ENGINE_SLOTS",
                // The default -c: 4096 up to b4748, the training context after it (assumed).
                "4748 | -np 1                          | 4095  | CONTEXT_FLAG",
                "4749 | -np 1                          | 8191  | MODEL_CONFIG",
                // --kv-unified: b4916 refuses the flag; later builds take it (assumed) and give one slot all of -c.
                "4916 | -c 8192 -np 2 --kv-unified     |       | ENGINE_REFUSES",
                "4917 | -c 8192 -np 2 --kv-unified     | 8191  | CONTEXT_FLAG",
            })
    void eachRuleChangesAtItsOwnBuild(long build, String flags, Long expected, Bound bound) throws Exception {
        BackendPrediction p = predict(server(build).toString(), flags.strip(), 1, PredictInputs.none());

        assertThat(p.target()).as(p.summary()).isEqualTo(expected);
        assertThat(p.bound()).as(p.summary()).isEqualTo(bound);
    }

    /** The automatic slots of PR #16736: one slot without -np below b6925, four sharing a unified cache from it. */
    @ParameterizedTest(name = "b{0}")
    @CsvSource({"6924, 1, false", "6925, -1, true"})
    void theDefaultSlotsChangeAtTheirBuild(long build, String np, String unified) throws Exception {
        BackendPrediction p = predict(server(build).toString(), "-c 8192", 1, PredictInputs.none());

        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("-np");
            assertThat(i.value()).isEqualTo(np);
            assertThat(i.source()).isEqualTo(Source.DEFAULT);
        });
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("kv_unified");
            assertThat(i.value()).isEqualTo(unified);
        });
    }

    @Test
    void aKnownBuildNamesTheRulesThatDifferForIt() throws Exception {
        BackendPrediction between = predict(server(6925).toString(), "-c 8192 -np 1", 1, PredictInputs.none());
        assertThat(between.assumptions())
                .anySatisfy(a -> assertThat(a)
                        .contains("b6925 predates 1 of llama.cpp's rule changes")
                        .contains("n_ctx is padded to 32 without flash attention")
                        .contains("before b6926, PR #17046")
                        .doesNotContain("training context"))
                .anySatisfy(a -> assertThat(a)
                        .contains("-c defaults to 0")
                        .contains("--kv-unified and --no-kv-unified exist")
                        .contains("first build assumed"));

        BackendPrediction current =
                predict(server(LlamaCppModel.CURRENT_BUILD).toString(), "-c 8192 -np 1", 1, PredictInputs.none());
        assertThat(current.assumptions()).noneSatisfy(a -> assertThat(a).contains("rule change"));
    }

    @Test
    void anUnknownBuildNamesEveryRuleItAssumes() throws Exception {
        BackendPrediction p = predict("-c 8192 -np 1", 1);

        assertThat(p.assumptions())
                .anySatisfy(a -> assertThat(a)
                        .contains("the llama.cpp build is not known")
                        .contains("a slot is capped at the training context (from b6925, PR #16736)")
                        .contains("-np defaults to 4 slots sharing a unified KV cache (from b6925, PR #16736)")
                        .contains("n_ctx is padded to 256")
                        .contains("-c defaults to 0")
                        .contains("--kv-unified"));
    }

    @ParameterizedTest(name = "b4748 {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // n_ctx padded to 32, not 256: 5,024.
                "-c 5000 -np 1                  | 5023 | CONTEXT_FLAG",
                // With flash attention b4748 pads to 256.
                "-c 5000 -np 1 -fa              | 5119 | CONTEXT_FLAG",
                // No -c: b4748's default is 4096, not the training context.
                "-np 1                          | 4095 | CONTEXT_FLAG",
                // -np 2 splits n_ctx without a second padding.
                "-c 8192 -np 2                  | 4095 | ENGINE_SLOTS",
            })
    void anOlderBuildIsPredictedByItsOwnRules(String flags, long expected, Bound bound) throws Exception {
        BackendPrediction p = predict(olderServer().toString(), flags.strip(), 1, PredictInputs.none());

        assertThat(p.target()).as(p.summary()).isEqualTo(expected);
        assertThat(p.bound()).isEqualTo(bound);
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("llama.cpp build");
            assertThat(i.value()).isEqualTo("b4748");
        });
    }

    @Test
    void anOlderBuildDoesNotCapAtTheTrainingContextAndAnUnknownBuildSaysWhatIsAssumed() throws Exception {
        BackendPrediction older =
                predict(olderServer().toString(), "-c {max_model_len} -np 1", 1, PredictInputs.none());
        assertThat(older.bound()).as(older.summary()).isNotEqualTo(Bound.MODEL_CONFIG);

        BackendPrediction unknown = predict("-c {max_model_len} -np 1", 1);
        assertThat(unknown.bound()).isEqualTo(Bound.MODEL_CONFIG);
        assertThat(unknown.assumptions()).anySatisfy(a -> assertThat(a).contains("the llama.cpp build is not known"));
    }

    @Test
    void aGgufWithACutHeaderIsNotPredicted() throws Exception {
        Path cut = dir.resolve("cut.gguf");
        Files.write(cut, Arrays.copyOf(Files.readAllBytes(gguf), 200));
        Experiment e = Fixtures.parse(dir.resolve("cut.yaml"), """
                experiment: cut
                model: tiny
                sweep: {strategy: list, targets: [4096]}
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m %s -c 8192 -np 1 --port {port}
                """.formatted(cut));

        BackendPrediction p = Predictor.predict(e, e.backends().getFirst(), PredictInputs.none(), Engines::sizing);

        assertThat(p.target()).isNull();
        assertThat(p.bound()).isEqualTo(Bound.ENGINE_REFUSES);
        assertThat(p.summary()).startsWith("the server cannot start: -m " + cut).contains("failed to load model");
    }

    @Test
    void aCpuBuildIsBoundByTheHostsMemory() throws Exception {
        long host = 6L << 20;
        PredictInputs cpu = PredictInputs.none()
                .withDetected(new Hardware("this machine", "none", null, List.of(), "test", null))
                .withHostMemory(new HostMemory.Reading(host, "test MemTotal"));

        BackendPrediction p = predict("-c {max_model_len} -np 1", 256, cpu);

        // 1,024 B per cell; n_ctx = target + context_pad 1,024, padded to 256, must fit beside the GGUF's bytes.
        long cells = (host - Files.size(gguf)) / 1024;
        long expected = (cells / 256 * 256 - 1024) / 256 * 256;
        assertThat(p.bound()).as(p.summary()).isEqualTo(Bound.KV_MEMORY);
        assertThat(p.target()).isEqualTo(expected);
        assertThat(p.inputs()).anySatisfy(i -> assertThat(i.name()).isEqualTo("host memory"));
        assertThat(p.missing()).extracting(Missing::name).doesNotContain("memory per device");

        // With accelerator memory declared, the host's memory is not the bound.
        BackendPrediction declared = predict("-c {max_model_len} -np 1", 256, cpu.withHardware(1, 80.0));
        assertThat(declared.bound()).isEqualTo(Bound.MODEL_CONFIG);
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
