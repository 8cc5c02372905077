package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failure 9: a server that logs its environment and then fails put ctxprobe's keys into the evidence,
 * results.json and report.html. Servers now get an allow-listed environment, and the values of secret variables
 * are masked in the server log, the evidence, the results, the report and the console.
 */
class SecretsIT {
    private static final String PATTERN_KEY = "sk-live-0123456789abcdef";
    private static final String NAMED = "named-secret-value-42";
    private static final String FILE_TOKEN = "hf_file_token_0123456789";
    private static final String UNRELATED = "unrelated-value-987";

    @TempDir
    Path dir;

    private Process ctxprobe;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    @Test
    void secretValuesAreMaskedEverywhereAndServersGetOnlyWhatTheyNeed() throws Exception {
        Path exp = FaultRuns.write(
                dir,
                "secrets",
                List.of(1000L),
                0,
                "{startup_s: 10, request_s: 3, shutdown_s: 2}",
                "secrets: [CTXPROBE_TEST_NAMED]\n"
                        + "pass_env: [CTXPROBE_PASSED_*, CTXPROBE_TEST_*]\n"
                        + "env: {HF_TOKEN: " + FILE_TOKEN + "}\n",
                List.of(new Backend("leaky", null, "--fault leak-env")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(
                dir.resolve("ctxprobe.log"),
                Map.of(
                        "CTXPROBE_TEST_API_KEY", PATTERN_KEY,
                        "CTXPROBE_TEST_NAMED", NAMED,
                        "CTXPROBE_UNRELATED", UNRELATED,
                        "CTXPROBE_PASSED_ONE", "passed-through"),
                List.of(),
                "run",
                exp.toString(),
                "--out",
                out.toString(),
                "--verbose");
        assertThat(ctxprobe.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String console = Files.readString(dir.resolve("ctxprobe.log"));
        assertThat(ctxprobe.exitValue()).as(console).isZero();
        Path runDir = FaultRuns.runDir(out, "secrets").orElseThrow();
        JsonNode step = FaultRuns.results(runDir).get("scenarios").get(0);
        String log = Files.readString(runDir.resolve(step.get("log").asString()));
        System.out.println("the leaking server's log line, as written: "
                + log.strip().lines().toList().getLast());

        assertThat(step.get("outcome").asString()).isEqualTo("startup_crash");
        assertThat(step.get("failure").get("evidence").toString())
                .as("the evidence shows the line, masked")
                .contains("its environment was")
                .contains("CTXPROBE_TEST_API_KEY=<masked>")
                .contains("HF_TOKEN=<masked>");
        assertThat(log)
                .contains("CTXPROBE_TEST_NAMED=<masked>")
                .contains("CTXPROBE_TEST_API_KEY=<masked>")
                .contains("CTXPROBE_PASSED_ONE=passed-through")
                .contains("PATH=")
                .as("a variable neither allowed nor passed does not reach the server")
                .doesNotContain("CTXPROBE_UNRELATED");
        Files.writeString(dir.resolve("console.txt"), console);
        try (Stream<Path> written = Stream.concat(Files.walk(runDir), Stream.of(dir.resolve("console.txt")))) {
            for (Path f : written.filter(Files::isRegularFile).toList()) {
                String text = Files.readString(f);
                assertThat(text)
                        .as(f.toString())
                        .doesNotContain(PATTERN_KEY)
                        .doesNotContain(NAMED)
                        .doesNotContain(FILE_TOKEN);
            }
        }
        assertThat(Files.readString(runDir.resolve("report.html"))).contains("&lt;masked&gt;");
    }
}
