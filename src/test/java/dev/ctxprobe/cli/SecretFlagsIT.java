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

/**
 * Issue 30, failure 1: a key written in a command ({@code --api-key sk-...}, {@code --hf-token=...}, from {@code
 * vars:}) reached results.json, report.html, the logs and validate's output. Now the values of secret-carrying
 * flags and of {@code {env:NAME}} placeholders are masked everywhere, and only the launch gets them: the test engine
 * writes what it received to a file outside the run folder.
 */
class SecretFlagsIT {
    private static final String SPACE_FORM = "sk-space-form-0123456789";
    private static final String EQUALS_FORM = "hf-equals-form-0123456789";
    private static final String FROM_VARS = "sk-from-vars-0123456789";
    private static final String FROM_ENV = "sk-from-env-0123456789";
    private static final List<String> KEYS = List.of(SPACE_FORM, EQUALS_FORM, FROM_VARS, FROM_ENV);
    /** A name that does not look secret: the value is masked because a command takes it with {env:...}. */
    private static final String VARIABLE = "CTXPROBE_TEST_PLAIN";

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

    private Path experiment() throws Exception {
        Path received = dir.resolve("received-keys.txt");
        Path exp = FaultRuns.write(
                dir,
                "keys",
                List.of(1000L),
                0,
                "{startup_s: 20, request_s: 5, shutdown_s: 3}",
                "",
                List.of(new Backend(
                        "keyed",
                        null,
                        "--api-key " + SPACE_FORM + " --hf-token=" + EQUALS_FORM + " --token {key} --auth-secret"
                                + " {env:" + VARIABLE + "} --keys-to " + received)));
        Files.writeString(exp, Files.readString(exp).replace("vars:\n", "vars:\n  key: " + FROM_VARS + "\n"));
        return exp;
    }

    private String ctxprobe(Map<String, String> env, String... args) throws Exception {
        Path log = dir.resolve("console-" + args[0] + ".txt");
        ctxprobe = FaultRuns.startCtxprobe(log, env, List.of(), args);
        assertThat(ctxprobe.waitFor(90, TimeUnit.SECONDS)).isTrue();
        return Files.readString(log);
    }

    @Test
    void keysInCommandsReachTheServerAndNoFileConsoleOrValidate() throws Exception {
        Path exp = experiment();
        Map<String, String> env = Map.of(VARIABLE, FROM_ENV);

        String validate = ctxprobe(env, "validate", exp.toString(), "--argv");
        assertThat(ctxprobe.exitValue()).as(validate).isZero();
        assertThat(validate).contains("--api-key <masked> --hf-token=<masked> --token <masked> --auth-secret <masked>");
        KEYS.forEach(k -> assertThat(validate).doesNotContain(k));

        Path out = dir.resolve("out");
        String run = ctxprobe(env, "run", exp.toString(), "--out", out.toString(), "--verbose");
        assertThat(ctxprobe.exitValue()).as(run).isZero();
        assertThat(Files.readString(dir.resolve("received-keys.txt")))
                .as("the launch got every real value")
                .contains("--api-key " + SPACE_FORM)
                .contains("--hf-token " + EQUALS_FORM)
                .contains("--token " + FROM_VARS)
                .contains("--auth-secret " + FROM_ENV);
        Path runDir = FaultRuns.runDir(out, "keys").orElseThrow();
        assertThat(FaultRuns.results(runDir)
                        .get("scenarios")
                        .get(0)
                        .get("server_args")
                        .asString())
                .contains("--api-key <masked> --hf-token=<masked> --token <masked> --auth-secret <masked>");
        List<Path> files;
        try (Stream<Path> walk = Files.walk(runDir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertThat(files).extracting(f -> f.getFileName().toString()).contains("experiment.yaml", "report.html");
        for (Path f : files) {
            String text = Files.readString(f);
            KEYS.forEach(k -> assertThat(text).as(f.toString()).doesNotContain(k));
        }
        KEYS.forEach(k -> assertThat(run).as("the console").doesNotContain(k));

        // The copy --resume reads holds the mask where the file wrote a key: resume says what to do.
        String resume = ctxprobe(env, "run", "--resume", runDir.toString());
        assertThat(ctxprobe.exitValue()).as(resume).isEqualTo(2);
        assertThat(resume).contains("holds <masked>").contains("{env:NAME}").doesNotContain("Exception");
    }

    @Test
    void aMissingVariableIsNamedBeforeAnythingStarts() throws Exception {
        Path exp = experiment();
        String validate = ctxprobe(Map.of(), "validate", exp.toString());
        assertThat(ctxprobe.exitValue()).as(validate).isEqualTo(2);
        assertThat(validate).contains(VARIABLE + " is not set").contains("keys.yaml:");
        String run = ctxprobe(
                Map.of(), "run", exp.toString(), "--out", dir.resolve("out").toString());
        assertThat(ctxprobe.exitValue()).as(run).isEqualTo(2);
        assertThat(run).contains(VARIABLE + " is not set");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    /**
     * A key under 6 characters (docs/experiment-file.md#keys-in-a-command) is masked where the command is shown, but
     * masking it in free log text would garble every "12ab" of a log: validate and run say so before anything starts.
     */
    @Test
    void aKeyTooShortToMaskInLogTextIsAWarning() throws Exception {
        Path exp = FaultRuns.write(
                dir,
                "short",
                List.of(1000L),
                0,
                "{startup_s: 20, request_s: 5, shutdown_s: 3}",
                "",
                List.of(new Backend("keyed", null, "--api-key 12ab")));
        String validate = ctxprobe(Map.of(), "validate", exp.toString(), "--argv");
        assertThat(ctxprobe.exitValue()).as(validate).isZero();
        String warning = "backend 'keyed': a secret in its command is 4 characters long; it is masked where the"
                + " command is shown, but not in the server's log text";
        assertThat(validate).contains(warning).contains("--api-key <masked>").doesNotContain("12ab");
        String run = ctxprobe(
                Map.of(), "run", exp.toString(), "--out", dir.resolve("out").toString());
        assertThat(ctxprobe.exitValue()).as(run).isZero();
        assertThat(run).contains("warning: " + warning);
    }
}
