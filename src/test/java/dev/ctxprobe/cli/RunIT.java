package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.launch.ProcessGroups;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code ctxprobe run} end to end against the test engine as real child processes. */
class RunIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Path H200_SEED = FaultRuns.h200Seed();

    @TempDir
    Path dir;

    private static final String LOAD =
            "  output_len: 1\n  num_prompts: 2\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: 1\n";

    private JsonNode run(Path experiment, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of(
                "run", experiment.toString(), "--out", dir.resolve("out").toString()));
        args.addAll(List.of(extra));
        CliRun run = CliRun.of(args.toArray(String[]::new));
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        return JSON.readTree(runDir().resolve("results.json").toFile());
    }

    private Path runDir() throws IOException {
        try (Stream<Path> s = Files.list(dir.resolve("out"))) {
            Path experimentDir = s.findFirst().orElseThrow();
            try (Stream<Path> runs = Files.list(experimentDir)) {
                return runs.findFirst().orElseThrow();
            }
        }
    }

    @Test
    void aListRunWritesTheSeedsSchemaWithCorrectNumbersAndClassifiesARefusal() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "vllm_like",
                "  strategy: list\n  targets: [1000, 2000, 4000]\n",
                LOAD,
                "vllm|vllm|--capacity 3000 --prefill-us-per-token 20");

        JsonNode doc = run(exp);

        JsonNode seed = JSON.readTree(H200_SEED.toFile());
        assertHasKeysWithTypes(seed.get("metadata"), doc.get("metadata"), "metadata");
        JsonNode seedConfig = seed.get("config").deepCopy();
        // The seed's vars and visible devices are its own; the load keys must match.
        ((tools.jackson.databind.node.ObjectNode) seedConfig).remove(List.of("tp", "cuda_visible_devices"));
        assertHasKeysWithTypes(seedConfig, doc.get("config"), "config");
        JsonNode ok = doc.get("scenarios").get(0);
        assertHasKeysWithTypes(seed.get("scenarios").get(0), ok, "scenario");
        assertHasKeysWithTypes(seed.get("scenarios").get(0).get("metrics"), ok.get("metrics"), "metrics");
        assertHasKeysWithTypes(
                seed.get("scenarios").get(8), doc.get("scenarios").get(2), "failed scenario");

        assertThat(doc.get("scenarios")).hasSize(3);
        for (int i = 0; i < 2; i++) {
            JsonNode s = doc.get("scenarios").get(i);
            JsonNode m = s.get("metrics");
            long target = s.get("target_len").asLong();
            assertThat(s.get("success").asBoolean()).isTrue();
            assertThat(s.get("max_model_len").asLong()).isEqualTo(target + 100);
            assertThat(m.get("success_count").asInt()).isEqualTo(2);
            assertThat(m.get("total_input_tokens").asLong())
                    .isEqualTo(target * m.get("success_count").asLong());
            assertThat(m.get("input_token_throughput").asDouble())
                    .isEqualTo(m.get("total_input_tokens").asDouble()
                            / m.get("duration_s").asDouble());
            assertThat(m.get("ttft_ms").get("count").asInt()).isEqualTo(2);
            // The engine sleeps 20 us a token before the first token: TTFT cannot be shorter.
            assertThat(m.get("ttft_ms").get("min").asDouble()).isGreaterThanOrEqualTo(target * 0.020);
            assertThat(m.get("duration_s").asDouble() * 1000)
                    .isGreaterThanOrEqualTo(m.get("e2e_ms").get("max").asDouble());
            assertThat(s.get("verification").get("exact").asBoolean()).isTrue();
            assertThat(s.get("requests")).hasSize(3);
            assertThat(runDir().resolve(s.get("log").asString())).exists();
        }
        JsonNode failed = doc.get("scenarios").get(2);
        assertThat(failed.get("success").asBoolean()).isFalse();
        assertThat(failed.get("metrics").isNull()).isTrue();
        assertThat(failed.get("outcome").asString()).isEqualTo("kv_insufficient");
        assertThat(failed.get("error").asString())
                .startsWith("server failed to start")
                .contains("3,000");
        assertThat(failed.get("failure").get("phase").asString()).isEqualTo("startup");
        assertThat(failed.get("failure").get("evidence").toString()).contains("estimated maximum model length is 3000");
        assertThat(failed.get("server").get("max_context_hint").asLong()).isEqualTo(3000);
        assertThat(runDir().resolve("logs/vllm_ctx_4000.log")).exists();

        JsonNode frontier = doc.get("frontier").get("vllm");
        assertThat(frontier.get("max_ok_target").asLong()).isEqualTo(2000);
        assertThat(frontier.get("min_failed_target").asLong()).isEqualTo(4000);
        assertThat(frontier.get("launches").asInt()).isEqualTo(3);
        assertThat(doc.get("metadata").get("finished_at").isNull()).isFalse();
        assertThat(runDir().resolve("report.html")).exists();
        assertNoGroupLeft(doc);
    }

    @Test
    void sglangLikeRejectionInsideA200StreamIsRequestRejectedWithTheLimit() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "sglang_like",
                "  strategy: list\n  targets: [1000, 3000]\n",
                LOAD,
                "sglang|sglang|--mode sglang --capacity 2500");

        JsonNode doc = run(exp);

        JsonNode rejected = doc.get("scenarios").get(1);
        assertThat(rejected.get("outcome").asString()).isEqualTo("request_rejected");
        assertThat(rejected.get("failure").get("phase").asString()).isEqualTo("warmup");
        Matcher limit = Pattern.compile("maximum allowed length \\((\\d+) tokens")
                .matcher(rejected.get("failure").get("evidence").toString());
        assertThat(limit.find()).as("the engine's own words are the evidence").isTrue();
        long said = Long.parseLong(limit.group(1));
        assertThat(said).isBetween(2490L, 2500L);
        assertThat(rejected.get("server").get("max_context_hint").asLong()).isEqualTo(said);
        assertNoGroupLeft(doc);
    }

    @Test
    void aChildThatOutlivesItsServerIsStoppedWithTheGroup() throws IOException {
        Path exp = TestExperiments.write(
                dir, "child", "  strategy: list\n  targets: [500, 1000]\n", LOAD, "e|vllm|--fault leave-child");

        JsonNode doc = run(exp);

        List<Long> children = new ArrayList<>();
        for (JsonNode s : doc.get("scenarios")) {
            assertThat(s.get("success").asBoolean()).isTrue();
            assertThat(s.get("server").get("leftover_pids")).isEmpty();
            Matcher m = Pattern.compile("child pid (\\d+)")
                    .matcher(Files.readString(runDir().resolve(s.get("log").asString())));
            assertThat(m.find()).isTrue();
            children.add(Long.parseLong(m.group(1)));
        }
        assertThat(children)
                .hasSize(2)
                .allSatisfy(pid -> assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                        .isNotEqualTo(java.util.Optional.of(true)));
        assertNoGroupLeft(doc);
        // issue 31: a clean finish left an empty servers.pid and run.lock; the folder keeps only what a reader needs.
        assertThat(runDir().resolve("servers.pid")).doesNotExist();
        assertThat(runDir().resolve("run.lock")).doesNotExist();
    }

    @Test
    void aMalformedExperimentLaunchesNothingAndExitsWith2() throws IOException {
        Path exp = TestExperiments.write(dir, "bad", "  strategy: list\n  targets: [1000, -1]\n", LOAD, "e|vllm|");
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("bad.yaml:").contains("above 0");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void anAlreadyRunningEndpointIsMeasuredWithoutALaunch() throws Exception {
        int port = dev.ctxprobe.testengine.TestEngines.freePort();
        Process engine = dev.ctxprobe.testengine.TestEngines.start(
                dir.resolve("engine.log"), "--port", Integer.toString(port), "--max-model-len", "8192");
        try {
            Path exp = dir.resolve("endpoint.yaml");
            Files.writeString(exp, """
                    experiment: endpoint
                    sweep: {strategy: list, targets: [1000, 9000]}
                    load: {warmup: 0}
                    backends:
                      - name: remote
                        engine: openai
                        port: %d
                    """.formatted(port));
            org.awaitility.Awaitility.await()
                    .atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> dev.ctxprobe.launch.Ports.busy("127.0.0.1", port));

            JsonNode doc = run(exp);

            assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("ok");
            assertThat(doc.get("scenarios").get(0).get("server_args").asString())
                    .isEmpty();
            assertThat(doc.get("scenarios").get(1).get("outcome").asString()).isEqualTo("request_rejected");
            assertThat(doc.get("frontier").get("remote").get("launches").asInt())
                    .isZero();
            assertThat(engine.isAlive())
                    .as("an endpoint ctxprobe did not start is not stopped")
                    .isTrue();
        } finally {
            engine.destroyForcibly().waitFor();
        }
    }

    private static void assertNoGroupLeft(JsonNode doc) {
        for (JsonNode s : doc.get("scenarios")) {
            JsonNode server = s.get("server");
            if (server != null && server.hasNonNull("pid")) {
                assertThat(ProcessGroups.members(server.get("pid").asLong()))
                        .as("processes of the group of step %s", s.get("target_len"))
                        .isEmpty();
            }
        }
    }

    /** Every key of the seed's object is in ours with the same JSON type (null allowed where the seed has null). */
    private static void assertHasKeysWithTypes(JsonNode seed, JsonNode ours, String what) {
        Set<String> missing = new TreeSet<>();
        for (Iterator<String> it = seed.propertyNames().iterator(); it.hasNext(); ) {
            String key = it.next();
            JsonNode theirs = seed.get(key);
            JsonNode mine = ours.get(key);
            if (mine == null) {
                missing.add(key);
            } else if (!theirs.isNull() && !mine.isNull()) {
                assertThat(mine.getNodeType()).as("%s.%s", what, key).isEqualTo(theirs.getNodeType());
                if (theirs.isNumber()) {
                    assertThat(mine.isIntegralNumber())
                            .as("%s.%s integral", what, key)
                            .isEqualTo(theirs.isIntegralNumber());
                }
            }
        }
        assertThat(missing).as("%s keys missing", what).isEmpty();
    }
}
