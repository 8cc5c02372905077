package dev.ctxprobe.cli;

import static dev.ctxprobe.cli.CapacityMaps.level;
import static dev.ctxprobe.cli.CapacityMaps.servers;
import static dev.ctxprobe.cli.CapacityMaps.withinOneStepBelow;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.testsupport.LlamaServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25: the capacity map of the real llama-server that {@code .ci/install-llama-server} installs, with
 * ctxprobe's own micro model. {@code -c 16384 -np 4}: with {@code --kv-unified} the four slots share 16,384 cells,
 * so N requests hold about 16,384 / N tokens each; without, each slot holds its 4,096 whatever the others do. Eight
 * requests are more than the four slots hold at once.
 */
class LlamaServerCapacityIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long ALIGN = 256;
    private static final int OUTPUT = 16;

    @TempDir
    static Path dir;

    private static String server;
    private static String micro;

    @BeforeAll
    static void needsTheRealServer() throws IOException {
        server = LlamaServer.require().toString();
        micro = LlamaServer.model(ModelShape.MICRO).toString();
    }

    private static JsonNode run(String name, String flags) throws IOException {
        String y = "experiment: " + name + "\n"
                + "model: '" + micro + "'\n"
                + "context_pad: 64\n"
                + "vars: {server: '" + server + "'}\n"
                + "load: {output_len: " + OUTPUT + ", warmup: 0}\n"
                + "sweep: {strategy: frontier, frontier: {min: 256, max: 16384, align: " + ALIGN + ","
                + " precision: 0.01}, concurrency: [1, 2, 4, 8]}\n"
                + "timeouts: {startup_s: 60, request_s: 120, shutdown_s: 10}\n"
                + "backends:\n"
                + "  - name: llama\n"
                + "    engine: llamacpp\n"
                + "    command: '{server} -m {model} -c 16384 -np 4 " + flags + " --host 127.0.0.1 --port {port}'\n";
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y);
        CliRun run = CliRun.of(
                "run", file.toString(), "--out", dir.resolve("out-" + name).toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out-" + name).resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    @Test
    void aUnifiedCacheIsSharedSoEachLevelHoldsItsShare() throws IOException {
        JsonNode doc = run("unified", "--kv-unified");
        JsonNode f = doc.get("frontier").get("llama");
        System.out.println("unified surface: " + f.get("surface"));

        // One slot may use all 16,384 cells: the longest prompt is 16,383.
        assertThat(f.get("max_ok_target").asLong()).isGreaterThanOrEqualTo(16_383 - ALIGN);
        withinOneStepBelow(level(f, 2), 16_384 / 2 - OUTPUT, ALIGN);
        withinOneStepBelow(level(f, 4), 16_384 / 4 - OUTPUT, ALIGN);
        JsonNode eight = level(f, 8);
        assertThat(eight.get("max_ok_target").isNull()).as(eight.toString()).isTrue();
        assertThat(eight.get("cause").asString()).isEqualTo("not_concurrent");
        assertThat(eight.get("detail").asString())
                .contains("more requests than slots (8 at once, the server has 4): not sent");
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
    }

    @Test
    void aSplitCacheGivesEverySlotItsQuarterAtEveryLevel() throws IOException {
        JsonNode doc = run("split", "--no-kv-unified");
        JsonNode f = doc.get("frontier").get("llama");
        System.out.println("split surface: " + f.get("surface"));

        assertThat(f.get("max_ok_target").asLong()).isBetween(4_095 - ALIGN, 4_095L);
        withinOneStepBelow(level(f, 2), 4_096 - OUTPUT, ALIGN);
        withinOneStepBelow(level(f, 4), 4_096 - OUTPUT, ALIGN);
        JsonNode eight = level(f, 8);
        assertThat(eight.get("max_ok_target").isNull()).as(eight.toString()).isTrue();
        assertThat(eight.get("detail").asString())
                .contains("more requests than slots (8 at once, the server has 4): not sent");
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
    }
}
