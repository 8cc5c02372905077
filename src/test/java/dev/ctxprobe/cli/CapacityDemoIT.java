package dev.ctxprobe.cli;

import static dev.ctxprobe.cli.CapacityMaps.level;
import static dev.ctxprobe.cli.CapacityMaps.servers;
import static dev.ctxprobe.cli.CapacityMaps.withinOneStepBelow;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25: the example {@code experiments/capacity-demo.yaml} draws the capacity map on the embedded engine, end to
 * end through real launches of {@code ctxprobe serve --parallel N}. The binding's llama.cpp splits the context, so
 * every level up to the slots holds a slot's share less the output, more requests than slots are not held at once,
 * and the map costs at most one launch more than the single-prompt frontier.
 */
class CapacityDemoIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Path DEMO = Path.of("experiments/capacity-demo.yaml");
    private static final long CTX = 4096;
    private static final long ALIGN = 16;
    private static final long OUTPUT = 16;

    @TempDir
    Path dir;

    private JsonNode run(Path file, String name) throws IOException {
        long began = System.nanoTime();
        CliRun run =
                CliRun.of("run", file.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        double seconds = (System.nanoTime() - began) / 1e9;
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        JsonNode f = doc.get("frontier").get("embedded");
        System.out.printf(
                Locale.ROOT,
                "%s: %.1f s, %d servers, single-prompt launches %d, surface %s%n",
                name,
                seconds,
                servers(doc),
                f.get("launches").asInt(),
                f.get("surface"));
        // The bar for the example: under two minutes on 2 cores.
        assertThat(seconds).isLessThan(120);
        return doc;
    }

    /** Every probe of N requests that passed served all N, each with exactly the target's prompt tokens. */
    private static void everyProbeServedItsRequests(JsonNode doc) {
        doc.get("scenarios").forEach(s -> {
            if (s.get("concurrency").asInt() > 1 && s.get("success").asBoolean()) {
                assertThat(s.get("requests")).hasSize(s.get("concurrency").asInt());
                s.get("requests")
                        .forEach(r -> assertThat(r.get("prompt_tokens").asLong())
                                .isEqualTo(s.get("target_len").asLong()));
            }
        });
    }

    @Test
    void theExampleMapsTwoSlotsOfHalfTheContext() throws IOException {
        JsonNode doc = run(DEMO, "capacity-demo");
        JsonNode f = doc.get("frontier").get("embedded");
        long slot = CTX / 2;

        assertThat(f.get("max_ok_target").asLong()).isBetween(slot - OUTPUT - ALIGN, slot - OUTPUT);
        withinOneStepBelow(level(f, 2), slot - OUTPUT, ALIGN);
        JsonNode four = level(f, 4);
        assertThat(four.get("max_ok_target").isNull()).as(four.toString()).isTrue();
        assertThat(four.get("cause").asString()).isEqualTo("not_concurrent");
        assertThat(four.get("detail").asString())
                .contains("more requests than slots (4 at once, the server has 2): not sent");
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
        everyProbeServedItsRequests(doc);
        // One token over a slot is refused by the server, not held: the single-prompt search's bracket shows it.
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(slot - OUTPUT + ALIGN);
        doc.get("scenarios").forEach(s -> {
            if (s.get("target_len").asLong() > slot - OUTPUT) {
                assertThat(s.get("outcome").asString()).isEqualTo("request_rejected");
            }
        });
    }

    @Test
    void fourSlotsHoldUpToFourRequestsOfAQuarterEach() throws IOException {
        String demo = Files.readString(DEMO)
                .replace("--parallel 2", "--parallel 4")
                .replace("concurrency: [1, 2, 4]", "concurrency: [1, 2, 4, 8]");
        Path file = dir.resolve("capacity-demo.yaml");
        Files.writeString(file, demo);

        JsonNode doc = run(file, "capacity-demo");
        JsonNode f = doc.get("frontier").get("embedded");
        long slot = CTX / 4;

        assertThat(f.get("max_ok_target").asLong()).isBetween(slot - OUTPUT - ALIGN, slot - OUTPUT);
        withinOneStepBelow(level(f, 2), slot - OUTPUT, ALIGN);
        withinOneStepBelow(level(f, 4), slot - OUTPUT, ALIGN);
        JsonNode eight = level(f, 8);
        assertThat(eight.get("max_ok_target").isNull()).as(eight.toString()).isTrue();
        assertThat(eight.get("cause").asString()).isEqualTo("not_concurrent");
        assertThat(eight.get("detail").asString())
                .contains("more requests than slots (8 at once, the server has 4): not sent");
        assertThat(servers(doc)).isLessThanOrEqualTo(f.get("launches").asInt() + 1);
        everyProbeServedItsRequests(doc);
    }
}
