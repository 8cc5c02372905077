package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * ctxprobe against the test engine speaking the texts of real engine versions: llama.cpp b4748 (the SSE error
 * field, silent truncation, its abort on every exit) beside b11669, vLLM's old and new wording, its auto-fit and its
 * hang at capacity, and SGLang's limit on the model's context. What no machine here can run for real is tested here.
 */
class EngineVersionsIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String LOAD = "  output_len: 1\n  num_prompts: 1\n  warmup: 0\n";
    private static final long PAD = 100;

    @TempDir
    Path dir;

    @Test
    void eachVersionsTextsAreClassifiedByTheirOwnRule() throws IOException {
        Map<String, JsonNode> steps = byBackend(run(
                "versions",
                "  strategy: list\n  targets: [1000]\n",
                "b4748_stream|llamacpp|--mode llamacpp --build b4748 --no-context-shift -np 2",
                "b4748_shift|llamacpp|--mode llamacpp --build b4748 -np 2",
                "b4748_kv|llamacpp|--mode llamacpp --build b4748 --capacity 500",
                "b11669_slots|llamacpp|--mode llamacpp -np 2",
                "b4748_beyond|llamacpp|--mode llamacpp --build b4748 --n-ctx-train 512",
                "vllm_old|vllm|--capacity 500",
                "vllm_new|vllm|--build new --capacity 500"));

        // -c 1,100 rounded up to 1,120 and split in two: a slot holds 560 tokens, and b4748 names no number.
        JsonNode stream = steps.get("b4748_stream");
        assertThat(stream.get("outcome").asString()).as(stream.toString()).isEqualTo("request_rejected");
        assertThat(stream.get("failure").get("detail").asString())
                .startsWith("error event in a 200 stream: the server rejected the prompt as too long")
                .contains("each of the 2 slots holds 560 tokens");
        assertThat(stream.get("server").get("max_context_hint").asLong()).isEqualTo(560);
        // b4748 aborts on every exit once its HTTP thread runs: exit 134 after ctxprobe's TERM is a clean stop.
        assertThat(stream.get("server").get("stopped_cleanly").asBoolean()).isTrue();
        assertThat(stream.get("server").get("ended").get("signal").asInt()).isEqualTo(6);
        assertThat(stream.get("server").get("ended").get("reason").asString()).isEqualTo("stopped");

        // b4748 serves past the training context of 512 without a cap: served, with the warning that says so.
        JsonNode beyond = steps.get("b4748_beyond");
        assertThat(beyond.get("outcome").asString()).as(beyond.toString()).isEqualTo("ok");
        assertThat(beyond.get("warnings").toString())
                .contains("served beyond the model's training context of 512 tokens (n_ctx_train) without rope"
                        + " scaling");

        JsonNode shifted = steps.get("b4748_shift");
        assertThat(shifted.get("outcome").asString()).as(shifted.toString()).isEqualTo("truncated");
        assertThat(shifted.get("failure").get("detail").asString()).contains("pass --no-context-shift");
        assertThat(shifted.get("failure").get("evidence").toString()).contains("input truncated, n_ctx = 560");

        JsonNode kv = steps.get("b4748_kv");
        assertThat(kv.get("outcome").asString()).as(kv.toString()).isEqualTo("kv_insufficient");
        assertThat(kv.get("failure").get("exit_code").asInt()).isEqualTo(134);
        assertThat(kv.get("failure").get("detail").asString())
                .contains("llama_kv_cache_init: failed to allocate buffer for kv cache")
                .doesNotContain("terminate called");

        JsonNode slots = steps.get("b11669_slots");
        assertThat(slots.get("outcome").asString()).isEqualTo("request_rejected");
        assertThat(slots.get("failure").get("detail").asString())
                .contains("(the longest prompt it takes is 767 tokens)")
                .contains("each of the 2 slots holds 768 tokens");

        for (String name : List.of("vllm_old", "vllm_new")) {
            JsonNode vllm = steps.get(name);
            assertThat(vllm.get("outcome").asString()).as(name).isEqualTo("kv_insufficient");
            assertThat(vllm.get("server").get("max_context_hint").asLong())
                    .as(name)
                    .isEqualTo(500);
        }
    }

    /** One launch with --max-model-len auto states the memory limit; the second checks one align above it. */
    @Test
    void vllmSizingItselfGivesAOnePercentBracketInTwoLaunches() throws IOException {
        long capacity = 30_001;
        JsonNode doc = run(
                "auto",
                frontier(1024, 65536, 256),
                "vllm|vllm|--build new --capacity " + capacity + " --derived-max 131072");
        JsonNode f = doc.get("frontier").get("vllm");
        long ok = f.get("max_ok_target").asLong();
        long failed = f.get("min_failed_target").asLong();
        assertThat(f.get("launches").asInt()).as(doc.toString()).isLessThanOrEqualTo(2);
        assertThat(ok).isEqualTo((capacity - PAD) / 256 * 256);
        assertThat(failed - ok).isLessThanOrEqualTo((long) (0.01 * ok));

        JsonNode first = doc.get("scenarios").get(0);
        assertThat(first.get("server_args").asString()).contains("--max-model-len auto");
        assertThat(first.get("max_model_len").asLong()).isEqualTo(capacity);
        assertThat(first.get("success").asBoolean()).isTrue();
        JsonNode stated = first.get("server").get("capacity");
        assertThat(stated.get("context_tokens").asLong()).isEqualTo(capacity);
        assertThat(stated.get("kv_tokens").asLong()).isEqualTo(capacity);
        assertThat(stated.get("reduced_from").asLong()).isEqualTo(131_072);
        assertThat(first.get("server").get("hint_kind").asString()).isEqualTo("max_model_len");
    }

    /** A request at the stated KV capacity that never gets output: the step below is checked, not the range. */
    @Test
    void aHangAtTheStatedCapacityIsNamedAndTheStepBelowChecked() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "hang",
                frontier(1000, 19_900, 100),
                LOAD,
                "{startup_s: 20, request_s: 2, shutdown_s: 3}",
                List.of(new TestExperiments.Backend(
                        "vllm", "vllm", null, "--capacity 20000 --fault hang-at-capacity")));
        JsonNode doc = run(exp, "hang");
        List<Long> targets = new ArrayList<>();
        doc.get("scenarios").forEach(s -> targets.add(s.get("target_len").asLong()));
        assertThat(targets).containsExactly(19_900L, 19_800L);
        JsonNode hung = doc.get("scenarios").get(0);
        assertThat(hung.get("outcome").asString()).isEqualTo("timeout");
        assertThat(hung.get("failure").get("detail").asString())
                .startsWith("no output at the stated capacity (a known vLLM scheduling hang)");
        assertThat(doc.get("frontier").get("vllm").get("max_ok_target").asLong())
                .isEqualTo(19_800);
    }

    /** SGLang's refusal of a context above the model's limit bounds max_model_len: the search probes limit - pad. */
    @Test
    void aLimitOnTheModelsContextCostsNoWastedLaunch() throws IOException {
        JsonNode doc =
                run("sglang_limit", frontier(1024, 32768, 256), "sglang|sglang|--mode sglang --derived-max 20000");
        List<Long> targets = new ArrayList<>();
        doc.get("scenarios").forEach(s -> targets.add(s.get("target_len").asLong()));
        long best = (20_000 - PAD) / 256 * 256;
        assertThat(targets).containsExactly(32768L, best, best + 256);
        assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("config_rejected");
        assertThat(doc.get("scenarios").get(0).get("server").get("hint_kind").asString())
                .isEqualTo("max_model_len");
        assertThat(doc.get("frontier").get("sglang").get("max_ok_target").asLong())
                .isEqualTo(best);
    }

    private static String frontier(long min, long max, long align) {
        return "  strategy: frontier\n  frontier: {min: " + min + ", max: " + max + ", precision: 0.01, align: " + align
                + ", max_launches: 12}\n";
    }

    private JsonNode run(String name, String sweep, String... backends) throws IOException {
        Path exp = TestExperiments.write(dir, name, sweep, LOAD, backends);
        if (name.equals("auto")) {
            // auto_first lets vLLM fit its context at the search's first launch.
            Files.writeString(
                    exp,
                    Files.readString(exp).replace("    engine: vllm\n", "    engine: vllm\n    auto_first: true\n"));
        }
        return run(exp, name);
    }

    private JsonNode run(Path exp, String name) throws IOException {
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    private static Map<String, JsonNode> byBackend(JsonNode doc) {
        Map<String, JsonNode> steps = new HashMap<>();
        doc.get("scenarios").forEach(s -> steps.put(s.get("backend").asString(), s));
        return steps;
    }
}
