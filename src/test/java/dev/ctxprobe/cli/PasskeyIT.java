package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code check: passkey} (docs/search.md#the-frontier-of-right-answers) against the test engine's pass-key model, a
 * real child process with a byte tokenizer of its own behind {@code POST /tokenize}: one that sees only a window of
 * the prompt, one that forgets its middle, one that answers noise above a length, one that fails the control.
 */
class PasskeyIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final long PAD = 100;
    private static final String TIMEOUTS = "{startup_s: 20, request_s: 10, shutdown_s: 3}";

    @TempDir
    Path dir;

    private JsonNode run(String name, String check, String sweep, String load, String engineArgs) throws IOException {
        Path exp = TestExperiments.write(
                dir,
                name,
                sweep,
                load,
                TIMEOUTS,
                "check: " + check + "\n",
                List.of(new TestExperiments.Backend("vllm", "vllm", null, engineArgs)));
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    private static List<JsonNode> steps(JsonNode doc) {
        List<JsonNode> steps = new ArrayList<>();
        doc.get("scenarios").forEach(steps::add);
        return steps;
    }

    private static JsonNode step(JsonNode doc, long target) {
        return steps(doc).stream()
                .filter(s -> s.get("target_len").asLong() == target)
                .findFirst()
                .orElseThrow();
    }

    private static Map<Double, String> byDepth(JsonNode depths) {
        Map<Double, String> out = new LinkedHashMap<>();
        depths.forEach(d -> out.put(d.get("depth").asDouble(), d.get("result").asString()));
        return out;
    }

    @Test
    void aWindowOfTwelveThousandTokensIsFoundWithinOneAlignStepWhileTheServedFrontierStays() throws IOException {
        long capacity = 40_001;
        long window = 12_000;
        JsonNode doc = run(
                "window",
                "{kind: passkey, control_len: 1024}",
                "  strategy: frontier\n  frontier: {min: 1024, max: 65536, precision: 0.01, align: 256,"
                        + " max_launches: 20}\n",
                "  output_len: 8\n  num_prompts: 1\n  warmup: 0\n",
                "--capacity " + capacity + " --passkey-window " + window);

        JsonNode f = doc.get("frontier").get("vllm");
        long served = (capacity - PAD) / 256 * 256;
        assertThat(f.get("max_ok_target").asLong()).as("the served frontier").isEqualTo(served);
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(served + 256);
        JsonNode correct = f.get("correct");
        // Every step's key lies in the middle: a window of 12,000 tokens sees it while half the prompt fits in it.
        long maxCorrect = correct.get("max_correct_target").asLong();
        assertThat(correct.get("min_wrong_target").asLong()).isEqualTo(maxCorrect + 256);
        assertThat(maxCorrect).isBetween(2 * window - 256, 2 * window);

        JsonNode wrong = step(doc, maxCorrect + 256);
        assertThat(wrong.get("success").asBoolean())
                .as("a wrong answer is no failure of serving")
                .isTrue();
        assertThat(wrong.get("outcome").asString()).isEqualTo("ok");
        assertThat(wrong.get("answer").get("result").asString()).isEqualTo("wrong");
        assertThat(wrong.get("answer").get("keys").get(0).get("got").asString()).contains("I do not know");
        assertThat(step(doc, maxCorrect).get("answer").get("result").asString()).isEqualTo("correct");

        // At the served frontier the window sees the last 12,000 of 39,680 tokens: the key near the end only.
        JsonNode atFrontier = correct.get("at_frontier");
        assertThat(atFrontier.get("target").asLong()).isEqualTo(served);
        assertThat(byDepth(atFrontier.get("depths")))
                .containsExactly(entry(0.1, "wrong"), entry(0.5, "wrong"), entry(0.9, "correct"));
        for (JsonNode s : steps(doc)) {
            if (s.get("success").asBoolean()) {
                assertThat(s.get("verification").get("exact").asBoolean())
                        .as("prompt_tokens equals the target at " + s.get("target_len"))
                        .isTrue();
                assertThat(s.get("passkey_ms").asDouble()).isPositive();
                assertThat(s.get("answer").get("keys").get(0).get("depth").asDouble())
                        .isEqualTo(0.5);
            } else {
                assertThat(s.has("answer"))
                        .as("a step not served has no answer")
                        .isFalse();
            }
        }
    }

    /**
     * Every step's key lies in the middle, which this model forgets: the control, its key near the start of 1,024
     * tokens, says the model can do the task, so the steps are wrong, not "not checked". The depths, asked on each
     * step that served more than any before it, catch the middle and only the middle.
     */
    @Test
    void aModelThatForgetsTheMiddleFailsAtTheMiddleDepthOnly() throws IOException {
        JsonNode doc = run(
                "middle",
                "{kind: passkey, depths: [0.1, 0.5, 0.9], control_len: 1024}",
                "  strategy: list\n  targets: [4096, 8192, 6144]\n",
                "  output_len: 8\n  num_prompts: 2\n  warmup: 0\n",
                "--passkey-forget-middle");
        for (JsonNode s : steps(doc)) {
            JsonNode answer = s.get("answer");
            assertThat(s.get("success").asBoolean()).isTrue();
            assertThat(answer.get("result").asString()).isEqualTo("wrong");
            assertThat(answer.get("keys"))
                    .hasSize(2)
                    .allMatch(k -> k.get("depth").asDouble() == 0.5);
            long target = s.get("target_len").asLong();
            if (target == 6144) {
                assertThat(answer.has("depths"))
                        .as("below the frontier so far: no depths asked")
                        .isFalse();
                assertThat(answer.has("depths_ms")).isFalse();
                continue;
            }
            assertThat(byDepth(answer.get("depths")))
                    .as("at " + target)
                    .containsExactly(entry(0.1, "correct"), entry(0.5, "wrong"), entry(0.9, "correct"));
            assertThat(answer.get("depths").get(1).get("request").asInt())
                    .as("the middle is read from a measured request")
                    .isZero();
            assertThat(answer.get("depths").get(0).has("request")).isFalse();
            assertThat(answer.get("depths_ms").asDouble()).isPositive();
        }
        JsonNode correct = doc.get("frontier").get("vllm").get("correct");
        assertThat(correct.get("max_correct_target").isNull()).isTrue();
        assertThat(correct.get("min_wrong_target").asLong()).isEqualTo(4096);
        assertThat(correct.get("at_frontier").get("target").asLong()).isEqualTo(8192);
        assertThat(byDepth(correct.get("at_frontier").get("depths")))
                .containsExactly(entry(0.1, "correct"), entry(0.5, "wrong"), entry(0.9, "correct"));
    }

    @Test
    void noiseAboveALengthIsWrongWithWhatCameBack() throws IOException {
        JsonNode doc = run(
                "garble",
                "passkey",
                "  strategy: list\n  targets: [4096, 8192]\n",
                "  output_len: 8\n  num_prompts: 1\n  warmup: 1\n",
                "--passkey-garble-above 6000");
        assertThat(step(doc, 4096).get("answer").get("result").asString()).isEqualTo("correct");
        JsonNode wrong = step(doc, 8192).get("answer");
        assertThat(wrong.get("result").asString()).isEqualTo("wrong");
        assertThat(wrong.get("keys").get(0).get("got").asString()).contains("#&%!@");
        JsonNode correct = doc.get("frontier").get("vllm").get("correct");
        assertThat(correct.get("max_correct_target").asLong()).isEqualTo(4096);
        assertThat(correct.get("min_wrong_target").asLong()).isEqualTo(8192);
    }

    @Test
    void aFailedControlMakesEveryStepNotCheckedNeverWrong() throws IOException {
        JsonNode doc = run(
                "control",
                "passkey",
                "  strategy: list\n  targets: [2048, 4096]\n",
                "  output_len: 8\n  num_prompts: 1\n  warmup: 0\n",
                "--passkey-window 100");
        for (JsonNode s : steps(doc)) {
            JsonNode answer = s.get("answer");
            assertThat(answer.get("result").asString()).isEqualTo("not_checked");
            assertThat(answer.get("reason").asString())
                    .startsWith("the model does not retrieve a pass key even at 256 tokens");
            assertThat(s.get("verification").get("exact").asBoolean()).isTrue();
        }
        JsonNode correct = doc.get("frontier").get("vllm").get("correct");
        assertThat(correct.get("max_correct_target").isNull()).isTrue();
        assertThat(correct.get("min_wrong_target").isNull()).isTrue();
        assertThat(correct.get("not_checked")).extracting(JsonNode::asLong).containsExactly(2048L, 4096L);
    }

    @Test
    void eachStepsAnswerIsInItsConsoleLineAndInEveryReportsTable() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "shown",
                "  strategy: list\n  targets: [4096, 8192]\n",
                "  output_len: 8\n  num_prompts: 1\n  warmup: 0\n",
                TIMEOUTS,
                "check: passkey\n",
                List.of(new TestExperiments.Backend("vllm", "vllm", null, "--passkey-garble-above 6000")));
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString());
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        String wrong = "wrong (depth 0.5: \"";
        assertThat(run.out().lines().filter(l -> l.startsWith("[") && l.contains(" 4,096 ")))
                .singleElement()
                .asString()
                .contains("answer correct");
        assertThat(run.out().lines().filter(l -> l.startsWith("[") && l.contains(" 8,192 ")))
                .singleElement()
                .asString()
                .contains("answer " + wrong + "#&%!@");
        Path results;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("shown"))) {
            results = runs.findFirst().orElseThrow().resolve("results.json");
        }
        for (String format : List.of("text", "md", "html")) {
            CliRun report = CliRun.of("report", results.toString(), "--format", format);
            assertThat(report.exitCode()).as(report.err()).isZero();
            assertThat(report.out())
                    .as(format)
                    .contains("answer")
                    .contains("correct")
                    .contains(format.equals("html") ? "wrong (depth 0.5: &quot;" : wrong);
        }
        CliRun csv = CliRun.of("report", results.toString(), "--format", "csv");
        List<String> rows = csv.out().lines().toList();
        List<String> header = List.of(rows.getFirst().split(","));
        assertThat(header).endsWith("answer", "answer_detail", "passkey_ms");
        assertThat(rows.get(1)).contains(",correct,,");
        assertThat(rows.get(2)).contains(",wrong,").contains("wrong (depth 0.5: ");
    }

    /**
     * A resumed run reads the control's verdict from the steps it kept: the step it runs says "not checked" with the
     * control's reason at once, without tokenizing or asking the control again.
     */
    @Test
    void aResumedRunDoesNotAskTheControlAgain() throws IOException {
        JsonNode whole = run(
                "resumed",
                "passkey",
                "  strategy: list\n  targets: [2048, 4096]\n",
                "  output_len: 8\n  num_prompts: 1\n  warmup: 0\n",
                "--passkey-window 100");
        String reason = step(whole, 4096).get("answer").get("reason").asString();
        assertThat(reason).startsWith("the model does not retrieve a pass key even at 256 tokens");
        assertThat(step(whole, 2048).get("passkey_ms").asDouble())
                .as("the first step tokenized its prompt and asked the control")
                .isGreaterThan(1);

        // As a run killed after its first step leaves it: the second step not recorded, the run not finished.
        Path runDir;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("resumed"))) {
            runDir = runs.findFirst().orElseThrow();
        }
        tools.jackson.databind.node.ObjectNode cut = (tools.jackson.databind.node.ObjectNode) whole;
        ((tools.jackson.databind.node.ArrayNode) cut.get("scenarios")).remove(1);
        ((tools.jackson.databind.node.ObjectNode) cut.get("metadata")).putNull("finished_at");
        cut.remove("frontier");
        Files.writeString(runDir.resolve("results.json"), JSON.writeValueAsString(cut));

        CliRun resumed = CliRun.of("run", "--resume", runDir.toString(), "--quiet");
        assertThat(resumed.exitCode()).as(resumed.out() + resumed.err()).isZero();
        JsonNode after = JSON.readTree(runDir.resolve("results.json").toFile());
        JsonNode again = step(after, 4096);
        assertThat(again.get("answer").get("result").asString()).isEqualTo("not_checked");
        assertThat(again.get("answer").get("reason").asString()).isEqualTo(reason);
        assertThat(again.get("passkey_ms").asDouble())
                .as("no /tokenize call and no control: the verdict was read from the first step")
                .isLessThan(1);
        assertThat(again.get("verification").get("exact").asBoolean()).isTrue();
    }
}
