package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.Main;
import dev.ctxprobe.testengine.TestEngines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A launcher of the test sources, written against the contract alone, runs a whole experiment: nothing in explore,
 * run or cli knows it. Requests go through its relay on another port, so they used the endpoint its handles name.
 */
class RelayLauncherIT {
    @TempDir
    Path dir;

    @Test
    void aWholeFrontierRunGoesThroughALauncherTheCoreNeverHeardOf() throws Exception {
        Path exp = dir.resolve("relayed.yaml");
        Files.writeString(exp, """
                experiment: relayed
                model: test-model
                context_pad: 100
                launcher: {kind: relay, label: r1}
                vars: {java: '%s', cp: '%s'}
                load: {output_len: 2, num_prompts: 1, warmup: 1}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 8192, align: 256, precision: 0.01}
                timeouts: {startup_s: 20, request_s: 5, shutdown_s: 3}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine
                      --port {port} --max-model-len {max_model_len} --capacity 5000
                """.formatted(TestEngines.javaBin(), TestEngines.classpath()));
        int relayedBefore = RelayLauncher.RELAYED.get();

        int code =
                Main.execute("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");

        assertThat(code).isZero();
        Path runDir;
        try (Stream<Path> runs = Files.list(dir.resolve("out/relayed"))) {
            runDir = runs.findFirst().orElseThrow();
        }
        JsonNode doc = JsonMapper.builder()
                .build()
                .readTree(runDir.resolve("results.json").toFile());
        JsonNode frontier = doc.get("frontier").get("vllm");
        // vLLM-like refusal names the capacity: max fails, the hint's target passes, one align above fails.
        assertThat(frontier.get("max_ok_target").asLong()).isEqualTo(4864);
        assertThat(frontier.get("min_failed_target").asLong()).isEqualTo(5120);
        int served = 0;
        for (JsonNode s : doc.get("scenarios")) {
            assertThat(s.get("server").get("id").asString()).startsWith("relay:r1:");
            assertThat(s.get("server").get("leftover_pids")).isEmpty();
            if (s.get("success").asBoolean()) {
                served++;
                assertThat(s.get("verification").get("exact").asBoolean()).isTrue();
            }
        }
        assertThat(served).isEqualTo(1);
        assertThat(RelayLauncher.RELAYED.get() - relayedBefore)
                .as("model discovery and the requests of the served step went through the relay")
                .isGreaterThanOrEqualTo(2);
        assertThat(Ledger.read(runDir.resolve(Ledger.NAME))).isEmpty();
    }

    @Test
    void theKindsOwnOptionsAreCheckedWhereTheFileGivesThem() throws Exception {
        Path exp = dir.resolve("bad.yaml");
        Files.writeString(exp, """
                experiment: bad
                launcher: {kind: relay, colour: blue}
                sweep: {strategy: list, targets: [1024]}
                backends:
                  - {name: b, engine: vllm, command: "vllm serve --port {port}"}
                """);

        assertThat(Main.execute("validate", exp.toString())).isEqualTo(Main.USAGE);
    }
}
