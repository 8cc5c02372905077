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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
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
     * A server that rejects its arguments exits within milliseconds, often before its last line has left the pipe:
     * 50 such launches while this JVM keeps every core busy must all be judged from the whole log.
     */
    @Test
    void fiftyFastExitsUnderLoadAreEachJudgedFromTheirWholeLog() throws Exception {
        String targets =
                IntStream.range(0, 25).mapToObj(i -> Integer.toString(1000 + i)).collect(Collectors.joining(", "));
        AtomicBoolean busy = new AtomicBoolean(true);
        List<Thread> load = new ArrayList<>();
        for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
            load.add(Thread.ofPlatform().daemon().start(() -> {
                while (busy.get()) {
                    Thread.onSpinWait();
                }
            }));
        }
        JsonNode doc;
        try {
            doc = run(
                    "fast_exits",
                    "{output_len: 1, num_prompts: 1, warmup: 0}",
                    "{strategy: list, targets: [" + targets + "]}",
                    "{startup_s: 60, request_s: 30, shutdown_s: 10}",
                    backend("bad_flag", "{server} -m {model} --no-such-flag --port {port}"),
                    backend("bad_value", "{server} -m {model} -t abc --port {port}"));
        } finally {
            busy.set(false);
            for (Thread t : load) {
                t.join();
            }
        }
        assertThat(doc.get("scenarios")).hasSize(50);
        doc.get("scenarios").forEach(step -> {
            assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("config_rejected");
            assertThat(step.get("failure").get("detail").asString())
                    .containsAnyOf("--no-such-flag", "error while handling argument \"-t\"");
        });
    }

    /** A quantized V cache without flash attention: the plan says it cannot start, and the run says why. */
    @Test
    void aQuantizedVCacheWithoutFlashAttentionIsRefusedByThePlanAndTheRun() throws IOException {
        String q8 = "{server} -m {model} -c {max_model_len} -np 1 -ctk q8_0 -ctv q8_0 -fa off --host 127.0.0.1"
                + " --port {port}";
        JsonNode step = run(
                        "q8v",
                        "{output_len: 1, num_prompts: 1, warmup: 0}",
                        "{strategy: list, targets: [1000]}",
                        "{startup_s: 60, request_s: 30, shutdown_s: 10}",
                        backend("q8v", q8))
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("config_rejected");
        assertThat(step.get("failure").get("detail").asString())
                .contains("quantized V cache requires flash_attn")
                .contains("pass -fa on, or keep -ctv f16");

        CliRun plan = CliRun.of("plan", dir.resolve("q8v.yaml").toString(), "--format", "json");
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        JsonNode predicted = JSON.readTree(plan.out()).get("backends").get(0);
        assertThat(predicted.get("bound").asString()).as(plan.out()).isEqualTo("engine_refuses");
        assertThat(predicted.get("summary").asString()).startsWith("the server cannot start");
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
     * {@code check: passkey} against the real server (docs/search.md#the-frontier-of-right-answers): the prompt is made
     * of the ids its own {@code /tokenize} gives, exactly the target long, and its random model misses the control's
     * key, so every step says "not checked" with the reason and none is wrong.
     */
    @Test
    void theRandomModelFailsThePasskeyControlSoNoStepIsChecked() throws IOException {
        JsonNode doc = run(
                "passkey",
                "{output_len: 8, num_prompts: 1, warmup: 0}",
                "{strategy: list, targets: [1500, 3000]}",
                "{startup_s: 60, request_s: 60, shutdown_s: 10}",
                backend("real", "{server} -m {model} -c {max_model_len} -np 1 --host 127.0.0.1 --port {port}")
                        + "    check: passkey\n");
        for (JsonNode step : doc.get("scenarios")) {
            assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("ok");
            assertThat(step.get("verification").get("exact").asBoolean())
                    .as("prompt_tokens equals the target")
                    .isTrue();
            JsonNode answer = step.get("answer");
            assertThat(answer.get("result").asString()).isEqualTo("not_checked");
            assertThat(answer.get("reason").asString())
                    .startsWith("the model does not retrieve a pass key even at 256 tokens");
            assertThat(step.get("passkey_ms").asDouble()).isNotNegative();
        }
        // The first step pays the control; a later one's needles were tokenized on the server before it, so it may
        // add nothing (docs/results.md, passkey_ms).
        assertThat(doc.get("scenarios").get(0).get("passkey_ms").asDouble()).isPositive();
        JsonNode correct = doc.get("frontier").get("real").get("correct");
        assertThat(correct.get("max_correct_target").isNull()).isTrue();
        assertThat(correct.get("min_wrong_target").isNull()).isTrue();
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

    /**
     * A matrix of the KV cache's type ({@code -ctk f16 | q8_0} with {@code -fa on}) by the slots ({@code -np 1 | 2})
     * against a fixed {@code -c 4096}: each cell's true limit is the slot's context less one, whatever the type, and
     * the plan knows it, so every cell is proved in two launches.
     */
    @Test
    void aMatrixOfKvTypeBySlotsGivesEachCellItsTrueLimitWithItsParams() throws IOException {
        JsonNode doc = matrixRun("matrix_local", "");
        assertTrueLimits(doc);
        JsonNode step = doc.get("scenarios").get(0);
        assertThat(step.get("params").toString()).isEqualTo("{\"ctk\":\"f16\",\"np\":\"1\"}");
        assertThat(step.get("server_args").asString()).contains("-np 1 -fa on -ctk f16 -ctv f16");
    }

    /** The same matrix, each step a Slurm job, two cells at once: the same outcomes as the local run. */
    @Test
    void theSameMatrixOnSlurmTwoCellsAtOnceGivesTheLocalRunsOutcomes() throws IOException {
        dev.ctxprobe.testsupport.SlurmCluster.assumeAvailable();
        JsonNode local = matrixRun("matrix_here", "");
        JsonNode slurm = matrixRun("matrix_slurm", "launcher: slurm\n", "--parallel", "2");
        assertTrueLimits(slurm);
        assertThat(outcomes(slurm)).isEqualTo(outcomes(local));
        assertThat(slurm.get("scenarios"))
                .allSatisfy(
                        s -> assertThat(s.get("server").get("id").asString()).startsWith("slurm:"));
    }

    private static JsonNode matrixRun(String name, String top, String... args) throws IOException {
        return run(
                name,
                top + "matrix: {ctk: [f16, q8_0], np: [1, 2]}\n",
                List.of(args),
                "{output_len: 1, num_prompts: 1, warmup: 0}",
                "{strategy: frontier, frontier: {min: 512, max: 16384, align: 1, precision: 0.01, max_launches: 8}}",
                "{startup_s: 60, request_s: 60, shutdown_s: 10}",
                backend(
                        "llama",
                        "{server} -m {model} -c 4096 -np {np} -fa on -ctk {ctk} -ctv {ctk} --host 127.0.0.1"
                                + " --port {port}"));
    }

    private static void assertTrueLimits(JsonNode doc) {
        Map<String, Long> limits = Map.of(
                "llama[ctk=f16,np=1]", 4095L,
                "llama[ctk=q8_0,np=1]", 4095L,
                "llama[ctk=f16,np=2]", 2047L,
                "llama[ctk=q8_0,np=2]", 2047L);
        int launches = 0;
        for (var cell : limits.entrySet()) {
            JsonNode f = doc.get("frontier").get(cell.getKey());
            assertThat(f).as(cell.getKey() + " in " + doc.get("frontier")).isNotNull();
            assertThat(f.get("max_ok_target").asLong()).as(cell.getKey()).isEqualTo(cell.getValue());
            assertThat(f.get("min_failed_target").asLong()).as(cell.getKey()).isEqualTo(cell.getValue() + 1);
            assertThat(f.get("predicted").get("target").asLong())
                    .as(cell.getKey())
                    .isEqualTo(cell.getValue());
            launches += f.get("launches").asInt();
        }
        assertThat(launches).as("launches for 4 cells").isLessThanOrEqualTo(8);
    }

    // Each cell's steps as target and outcome, by cell, whatever order the cells ran in.
    private static Map<String, List<String>> outcomes(JsonNode doc) {
        Map<String, List<String>> byCell = new java.util.TreeMap<>();
        doc.get("scenarios")
                .forEach(s -> byCell.computeIfAbsent(s.get("backend").asString(), c -> new ArrayList<>())
                        .add(s.get("target_len").asLong() + " "
                                + s.get("outcome").asString()));
        return byCell;
    }

    /**
     * Issue 32: a prompt far beyond what this machine prefills in request_s is not cut short at progress_s while the
     * real server's /slots shows its prefill moving (small batches, so each moves it within seconds): it ends at
     * request_s as an ordinary timeout, with no early verdict.
     */
    @Test
    void aLongPrefillIsNotCutShortWhileSlotsShowProgress() throws IOException {
        int requestS = 30;
        int progressS = 8;
        JsonNode step = run(
                        "progress",
                        "{output_len: 1, num_prompts: 1, warmup: 0}",
                        "{strategy: list, targets: [150000]}",
                        "{startup_s: 60, request_s: " + requestS + ", shutdown_s: 10, progress_s: " + progressS + "}",
                        backend(
                                "slow",
                                "{server} -m {mini} -c {max_model_len} -np 1 -b 256 -ub 256 -fit off --host 127.0.0.1"
                                        + " --port {port}"))
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("timeout");
        JsonNode failure = step.get("failure");
        assertThat(failure.get("detail").asString())
                .contains("no complete answer within " + requestS)
                .doesNotContain("no progress");
        assertThat(failure.has("verdict_s")).isFalse();
        // The server showed its prefill moving for longer than progress_s: several batches, seconds apart.
        Matcher batches = Pattern.compile("prompt processing, n_tokens = +(\\d+)")
                .matcher(Files.readString(
                        runDir("progress").resolve(step.get("log").asString())));
        List<Integer> processed = new ArrayList<>();
        while (batches.find()) {
            processed.add(Integer.parseInt(batches.group(1)));
        }
        assertThat(processed).as("prefill batches logged").hasSizeGreaterThan(2);
        assertThat(processed.getLast()).isLessThan(150_000);
    }

    private static String backend(String name, String command) {
        return "  - name: " + name + "\n    engine: llamacpp\n    command: " + yaml(command) + "\n";
    }

    private static String yaml(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    private static JsonNode run(String name, String load, String sweep, String timeouts, String... backends)
            throws IOException {
        return run(name, "", List.of(), load, sweep, timeouts, backends);
    }

    /** An experiment of {@code backends} with {@code top} (whole lines) at its top level, run with {@code args}. */
    private static JsonNode run(
            String name, String top, List<String> args, String load, String sweep, String timeouts, String... backends)
            throws IOException {
        StringBuilder y = new StringBuilder(top);
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
        List<String> argv = new ArrayList<>(List.of(
                "run", file.toString(), "--out", dir.resolve("out-" + name).toString(), "--quiet"));
        argv.addAll(args);
        CliRun run = CliRun.of(argv.toArray(String[]::new));
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
