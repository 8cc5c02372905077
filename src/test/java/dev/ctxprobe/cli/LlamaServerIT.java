package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.testsupport.LlamaServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * ctxprobe run against the real llama-server that {@code .ci/install-llama-server} installs, with ctxprobe's own GGUF
 * models: each behaviour the profile must classify, through an experiment file as a user writes one. Skipped where
 * the server is missing; CI requires it.
 */
class LlamaServerIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path dir;

    private static String server;
    private static String micro;
    private static String mini;

    @BeforeAll
    static void needsTheRealServer() throws IOException {
        server = LlamaServer.require().toString();
        micro = LlamaServer.model(ModelShape.MICRO).toString();
        mini = LlamaServer.model(ModelShape.MINI).toString();
    }

    /**
     * One launch per backend at 1,000 tokens: a server that fits, one whose slots split the context, and the starts
     * that fail (a bad flag, a bad value, a KV cache too large for a 2 GB address space, a context far too large).
     */
    @Test
    void eachBehaviourIsClassifiedFromWhatTheRealServerSays() throws IOException {
        String limited = "sh -c \"ulimit -v $1 && shift && exec \\\"$@\\\"\" sh";
        Map<String, JsonNode> steps = byBackend(run(
                "behaviours",
                "{output_len: 1, num_prompts: 2, warmup: 1}",
                "{strategy: list, targets: [1000]}",
                "{startup_s: 60, request_s: 30, shutdown_s: 10}",
                backend("fits", "{server} -m {model} -c {max_model_len} -np 1 --host 127.0.0.1 --port {port}"),
                backend("slots", "{server} -m {model} -c {max_model_len} -np 2 --host 127.0.0.1 --port {port}"),
                backend("bad_flag", "{server} -m {model} --no-such-flag --port {port}"),
                backend("bad_value", "{server} -m {model} -t abc --port {port}"),
                backend(
                        "kv",
                        limited + " 2000000 {server} -m {mini} -c 4000000 -fit off --host 127.0.0.1 --port {port}"),
                backend(
                        "bad_alloc",
                        limited
                                + " 8000000 {server} -m {mini} -c 2147483647 -fit off --host 127.0.0.1 --port"
                                + " {port}")));

        JsonNode fits = steps.get("fits");
        assertThat(fits.get("outcome").asString()).as(fits.toString()).isEqualTo("ok");
        assertThat(fits.get("verification").get("exact").asBoolean()).isTrue();
        assertThat(fits.get("requests"))
                .hasSize(3)
                .allMatch(r -> r.get("prompt_tokens").asLong() == 1000);
        JsonNode stated = fits.get("server").get("capacity");
        // -c 1,064 rounded up to 1,280; ids came from its 260-id vocabulary, or the server would have refused them.
        assertThat(stated.get("context_tokens").asLong()).isEqualTo(1280);
        assertThat(stated.get("max_prompt_tokens").asLong()).isEqualTo(1279);
        assertThat(stated.get("vocab_size").asInt()).isEqualTo(260);
        assertThat(stated.get("train_context_tokens").asLong()).isEqualTo(ModelShape.DEMO_CONTEXT_LENGTH);
        assertThat(fits.get("server").get("stopped_cleanly").asBoolean()).isTrue();
        assertThat(fits.get("server").get("ended").get("exit_code").asInt()).isZero();
        // Prompt caching is on: a prompt that shared a prefix with an earlier one would evaluate fewer tokens.
        Matcher evaluated = Pattern.compile("prompt eval time = +[\\d.]+ ms / +(\\d+) tokens")
                .matcher(Files.readString(
                        runDir("behaviours").resolve(fits.get("log").asString())));
        List<Integer> tokens = new ArrayList<>();
        while (evaluated.find()) {
            tokens.add(Integer.parseInt(evaluated.group(1)));
        }
        assertThat(tokens).as("every request evaluates its whole prompt").containsExactly(1000, 1000, 1000);

        JsonNode slots = steps.get("slots");
        assertThat(slots.get("outcome").asString()).as(slots.toString()).isEqualTo("request_rejected");
        long perSlot = slots.get("server").get("capacity").get("context_tokens").asLong();
        assertThat(perSlot).isLessThan(1000);
        assertThat(slots.get("server").get("capacity").get("slots").asInt()).isEqualTo(2);
        assertThat(slots.get("server").get("max_context_hint").asLong()).isEqualTo(perSlot);
        assertThat(slots.get("failure").get("detail").asString())
                .contains("each of the 2 slots holds " + String.format("%,d", perSlot) + " tokens")
                .contains("pass -np 1, or --kv-unified");
        assertThat(slots.get("warnings").get(0).asString())
                .startsWith("before sending: the server states a limit of " + String.format("%,d", perSlot - 1));

        for (String name : List.of("bad_flag", "bad_value")) {
            assertThat(steps.get(name).get("outcome").asString()).as(name).isEqualTo("config_rejected");
        }
        assertThat(steps.get("bad_value").get("failure").get("detail").asString())
                .contains("error while handling argument \"-t\": stoi");

        JsonNode kv = steps.get("kv");
        assertThat(kv.get("outcome").asString()).as(kv.toString()).isEqualTo("kv_insufficient");
        assertThat(kv.get("failure").get("detail").asString())
                .contains("failed to allocate buffer for kv cache")
                .contains("4,000,000 tokens")
                .doesNotContain("accelerator");
        assertThat(kv.get("failure").get("evidence").toString()).contains("ggml_aligned_malloc: insufficient memory");

        JsonNode alloc = steps.get("bad_alloc");
        assertThat(alloc.get("outcome").asString())
                .as(alloc.toString())
                .isIn("oom_startup", "kv_insufficient")
                .isNotEqualTo("startup_crash");
        assertThat(alloc.get("failure").get("detail").asString()).contains("std::bad_alloc");
    }

    /**
     * A context fixed in the command: the first refusal's n_ctx leads straight to the limit and one step above. The
     * search starts at max here (the prediction would start at the limit itself: LlamaServerPlanIT).
     */
    @Test
    void aFrontierAgainstAFixedContextIsFoundExactlyInThreeLaunches() throws IOException {
        JsonNode doc = run(
                "fixed",
                "{output_len: 1, num_prompts: 1, warmup: 1}",
                "{strategy: frontier, frontier: {min: 1024, max: 8192, align: 1, precision: 0.01, start: max}}",
                "{startup_s: 60, request_s: 30, shutdown_s: 10}",
                backend("fixed", "{server} -m {model} -c 5000 -np 1 --host 127.0.0.1 --port {port}"));
        JsonNode f = doc.get("frontier").get("fixed");
        // -c 5000 is rounded up to 5,120: the longest prompt is 5,119.
        assertThat(f.get("max_ok_target").asLong()).as(doc.toString()).isEqualTo(5119);
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(5120);
        assertThat(f.get("launches").asInt()).isLessThanOrEqualTo(3);
        assertThat(doc.get("scenarios")
                        .get(0)
                        .get("server")
                        .get("max_context_hint")
                        .asLong())
                .isEqualTo(5120);
    }

    /**
     * The server keeps running after SIGTERM while a client waits: a request that timed out must be ended before the
     * stop, so that the server leaves on TERM with exit code 0, not on KILL.
     */
    @Test
    void aTimedOutRequestIsEndedBeforeTheStopSoTheServerLeavesOnTerm() throws IOException {
        JsonNode step = run(
                        "timeout",
                        "{output_len: 1, num_prompts: 1, warmup: 0}",
                        "{strategy: list, targets: [300000]}",
                        "{startup_s: 60, request_s: 1, shutdown_s: 20}",
                        backend("slow", "{server} -m {model} -c {max_model_len} -np 1 --host 127.0.0.1 --port {port}"))
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("timeout");
        assertThat(step.get("server").get("stopped_cleanly").asBoolean()).isTrue();
        assertThat(step.get("server").get("ended").get("reason").asString()).isEqualTo("stopped");
        assertThat(step.get("server").get("ended").get("exit_code").asInt()).isZero();
    }

    private static String backend(String name, String command) {
        return "  - name: " + name + "\n    engine: llamacpp\n    command: " + yaml(command) + "\n";
    }

    private static String yaml(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    private static JsonNode run(String name, String load, String sweep, String timeouts, String... backends)
            throws IOException {
        StringBuilder y = new StringBuilder();
        y.append("experiment: ").append(name).append('\n');
        y.append("model: ").append(yaml(micro)).append('\n');
        y.append("context_pad: 64\n");
        y.append("vars: {server: ")
                .append(yaml(server))
                .append(", mini: ")
                .append(yaml(mini))
                .append("}\n");
        y.append("load: ").append(load).append('\n');
        y.append("sweep: ").append(sweep).append('\n');
        y.append("timeouts: ").append(timeouts).append('\n');
        y.append("backends:\n");
        for (String b : backends) {
            y.append(b);
        }
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y);
        CliRun run = CliRun.of(
                "run", file.toString(), "--out", dir.resolve("out-" + name).toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        return JSON.readTree(runDir(name).resolve("results.json").toFile());
    }

    private static Path runDir(String name) throws IOException {
        try (Stream<Path> runs = Files.list(dir.resolve("out-" + name).resolve(name))) {
            return runs.findFirst().orElseThrow();
        }
    }

    private static Map<String, JsonNode> byBackend(JsonNode doc) {
        Map<String, JsonNode> steps = new HashMap<>();
        doc.get("scenarios").forEach(s -> steps.put(s.get("backend").asString(), s));
        return steps;
    }
}
