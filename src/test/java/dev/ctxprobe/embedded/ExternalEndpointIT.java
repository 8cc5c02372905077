package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code launcher: external}: a real {@code ctxprobe serve} that the test started is measured as an endpoint that is
 * already running. Nothing is launched, the refusal above its context is read with the engine's own texts, and the
 * server outlives the run, since ctxprobe did not start it.
 */
class ExternalEndpointIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void aRunningServeIsMeasuredWithoutALaunchAndLeftRunning() throws Exception {
        try (ServeProcess serve =
                ServeProcess.start(dir, "--port", "0", "--ctx-size", "4096", "--kv-memory", "8MiB", "--threads", "2")) {
            int port = serve.awaitReady();
            Path exp = dir.resolve("external.yaml");
            Files.writeString(exp, """
                    experiment: external
                    sweep: {strategy: list, targets: [1000, 6000]}
                    load: {warmup: 0, num_prompts: 1, output_len: 1}
                    backends:
                      - name: served
                        engine: embedded
                        launcher: external
                        port: %d
                    """.formatted(port));

            int code = Main.execute(
                    "run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");

            assertThat(code).isZero();
            JsonNode doc = JSON.readTree(results().toFile());
            JsonNode served = doc.get("scenarios").get(0);
            assertThat(served.get("outcome").asString()).isEqualTo("ok");
            assertThat(served.get("verification").get("prompt_tokens").asLong()).isEqualTo(1000);
            assertThat(served.get("verification").get("exact").asBoolean()).isTrue();
            assertThat(served.get("server").get("ready_via").asString()).startsWith("already running at ");
            assertThat(served.get("server").path("pid").isNumber())
                    .as("no process of ctxprobe's")
                    .isFalse();
            JsonNode refused = doc.get("scenarios").get(1);
            assertThat(refused.get("outcome").asString()).isEqualTo("request_rejected");
            assertThat(refused.get("failure").get("detail").asString()).contains("4096");
            assertThat(doc.get("frontier").get("served").get("launches").asInt())
                    .isZero();
            assertThat(serve.process.isAlive())
                    .as("an endpoint ctxprobe did not start is not stopped")
                    .isTrue();
        }
    }

    private Path results() throws IOException {
        try (Stream<Path> experiments = Files.list(dir.resolve("out"))) {
            Path experimentDir = experiments.findFirst().orElseThrow();
            try (Stream<Path> runs = Files.list(experimentDir)) {
                return runs.findFirst().orElseThrow().resolve("results.json");
            }
        }
    }
}
