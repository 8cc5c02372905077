package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ByteVocab;
import dev.ctxprobe.embedded.DemoModel;
import dev.ctxprobe.embedded.GgufWriter;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.testsupport.LlamaServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The real llama-server: for each way its per-request limit is set, the target {@code ctxprobe plan} predicts from the
 * GGUF header and the command is the largest one {@code ctxprobe run} sees served, with the next token refused. The
 * frontier is searched at an alignment of one token, so the prediction must be exact.
 */
class LlamaServerPlanIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** A micro model trained to 3,000 tokens, for the n_ctx_train bound. */
    private static final long SHORT_TRAINING = 3_000;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // -c 5000 is padded to 256: n_ctx 5,120 in one slot, a prompt below it.
                "fixed -c                 | -c 5000 -np 1                  | false | 0    | 5119 | context_flag",
                // Without a unified KV cache each of 2 slots gets n_ctx / 2.
                "-np 2 --no-kv-unified    | -c 8192 -np 2 --no-kv-unified  | false | 0    | 4095 | engine_slots",
                // Without -c the context is the training context (3,000, padded to 3,072 and capped back).
                "n_ctx_train              | -np 1                          | true  | 0    | 2999 | model_config",
                // Two slots of a templated -c round twice, so fit is not monotonic: 1,024 fails (slots of 1,024),
                // 1,025 to 1,279 fit (n_ctx 2,304, slots of 1,280); bisection alone would stop at 1,023.
                "-np 2 templated -c       | -c {max_model_len} -np 2       | false | 1024 | 1279 | engine_slots",
                // YaRN scaling raises the cap to twice the training context of 3,000.
                "YaRN x2                  | -c {max_model_len} -np 1 --rope-scaling yarn --rope-scale 2 | true | 0 | 5999 | model_config",
            })
    void thePredictionIsTheMeasuredLimit(
            String name, String flags, boolean shortTraining, long pad, long limit, String bound) throws IOException {
        Path llama = LlamaServer.require();
        Path model = shortTraining ? shortModel() : LlamaServer.model(ModelShape.MICRO);
        Path exp = dir.resolve("llama.yaml");
        Files.writeString(exp, """
                experiment: llama
                model: '%s'
                context_pad: %d
                vars: {llama: '%s'}
                load: {output_len: 1, num_prompts: 1, warmup: 0}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 16384, precision: 0.0001, align: 1, max_launches: 12}
                timeouts: {startup_s: 60, request_s: 60, shutdown_s: 10}
                backends:
                  - name: llama
                    engine: llamacpp
                    token_ids: [65, 91]
                    command: "{llama} -m {model} --host {host} --port {port} %s"
                """.formatted(model, pad, llama, flags));

        CliRun plan = CliRun.of("plan", exp.toString(), "--format", "json");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        JsonNode predicted = JSON.readTree(plan.out()).get("backends").get(0);
        assertThat(predicted.get("target").asLong()).as(plan.out()).isEqualTo(limit);
        assertThat(predicted.get("bound").asString()).isEqualTo(bound);

        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("llama"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        JsonNode f = doc.get("frontier").get("llama");
        assertThat(f.get("max_ok_target").asLong())
                .as(doc.get("scenarios").toString())
                .isEqualTo(limit);
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(limit + 1);
        assertThat(f.get("launches").asInt()).isEqualTo(2);
        assertThat(doc.get("scenarios").get(1).get("outcome").asString()).isEqualTo("request_rejected");
    }

    private static Path shortModel() throws IOException {
        Path cache = Path.of("target", "test-model-cache").toAbsolutePath();
        Files.createDirectories(cache);
        Path file = cache.resolve("ctxprobe-micro-ctx3000-f32.gguf");
        if (!Files.isRegularFile(file)) {
            ModelShape shape = new ModelShape("micro", 1, 32, 1, 1, 64, SHORT_TRAINING, ByteVocab.SIZE);
            Path tmp = Files.createTempFile(cache, "micro-ctx3000-", ".gguf.tmp");
            GgufWriter.write(shape, GgufWriter.WeightType.F32, DemoModel.SEED, tmp);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        return file;
    }
}
