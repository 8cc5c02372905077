package dev.ctxprobe.cli;

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
 * The demo with {@code check: passkey} (docs/search.md#the-frontier-of-right-answers): the embedded engine's random
 * model misses the key of the control, so every step says "not checked" with the reason, nothing is wrong, the served
 * frontier is the demo's, and the time the check adds is a small part of each step.
 */
class PasskeyDemoIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void theRandomModelFailsTheControlAndNoStepIsWrong() throws IOException {
        String demo = Files.readString(Path.of("experiments/demo.yaml"));
        Path exp = dir.resolve("demo.yaml");
        // A five-digit key needs a few output tokens (docs/experiment-file.md#check).
        Files.writeString(exp, demo.replace("  output_len: 1\n", "  output_len: 8\n") + "check: passkey\n");

        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString());
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out()).contains("answered correctly: not checked");
        JsonNode doc;
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve("demo"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        JsonNode f = doc.get("frontier").get("embedded");
        assertThat(f.get("max_ok_target").asLong()).isEqualTo(42_496);
        JsonNode correct = f.get("correct");
        assertThat(correct.get("max_correct_target").isNull()).isTrue();
        assertThat(correct.get("min_wrong_target").isNull()).isTrue();
        assertThat(correct.get("not_checked_reason").asString())
                .startsWith("the model does not retrieve a pass key even at 256 tokens");

        double checkMs = 0;
        double stepsMs = 0;
        for (JsonNode s : doc.get("scenarios")) {
            if (!s.get("success").asBoolean()) {
                assertThat(s.has("answer")).isFalse();
                continue;
            }
            assertThat(s.get("verification").get("exact").asBoolean()).isTrue();
            JsonNode answer = s.get("answer");
            assertThat(answer.get("result").asString()).isEqualTo("not_checked");
            assertThat(answer.get("reason").asString()).contains("does not retrieve a pass key even at 256 tokens");
            double stepMs = (s.get("server").get("startup_s").asDouble()
                            + s.get("metrics").get("duration_s").asDouble())
                    * 1000;
            double ms = s.get("passkey_ms").asDouble();
            System.out.printf(
                    Locale.ROOT,
                    "passkey_ms at %d: %.1f ms of a %.0f ms step (%.2f%%)%n",
                    s.get("target_len").asLong(),
                    ms,
                    stepMs,
                    100 * ms / stepMs);
            checkMs += ms;
            stepsMs += stepMs;
        }
        System.out.printf(
                Locale.ROOT,
                "passkey_ms in all: %.1f ms of %.0f ms (%.2f%%)%n",
                checkMs,
                stepsMs,
                100 * checkMs / stepsMs);
        assertThat(checkMs).isLessThan(0.01 * stepsMs);
    }
}
