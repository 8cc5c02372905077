package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Command lines that must be refused, or only planned, before anything is launched. */
class RunCommandTest {
    @TempDir
    Path dir;

    private CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    void dryRunPrintsThePlanAndCreatesNothing() {
        CliRun r = run(
                "run",
                "experiments/dsv4-h200.yaml",
                "--dry-run",
                "--backend",
                "vllm",
                "--out",
                dir.resolve("o").toString());
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("backend vllm")
                .doesNotContain("backend sglang")
                .contains("--max-model-len 66560");
        assertThat(dir.resolve("o")).doesNotExist();
    }

    @Test
    void theStrategyCanBeOverridden() {
        CliRun r = run("run", "experiments/dsv4-p800.yaml", "--dry-run", "--strategy", "frontier");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("strategy frontier").contains("target 262144");
    }

    @Test
    void aStrategyChosenOnTheCommandLineSaysWhatItMadeUpForIt() throws IOException {
        // issue 31: --strategy frontier on a file without frontier: took bounds from the targets without a word.
        Path file = experiment("m", "vllm", TEST_ENGINE);
        Files.writeString(file, Files.readString(file).replace("targets: [1000]", "targets: [1000, 4000, 16000]"));
        CliRun frontier = run("run", file.toString(), "--dry-run", "--strategy", "frontier");
        assertThat(frontier.exitCode()).as(frontier.err()).isZero();
        assertThat(frontier.out())
                .startsWith("--strategy frontier: the file has no frontier:, so the search runs between its targets'"
                        + " smallest and largest: min 1,000, max 16,000, align 256, precision 0.01, max_launches 12"
                        + " (write a frontier: mapping to choose them)\n");
        CliRun list = run("run", "experiments/demo.yaml", "--dry-run", "--strategy", "list");
        assertThat(list.out()).contains("--strategy list: the file has no targets:, so the list doubles from");
        CliRun same = run("run", "experiments/dsv4-p800.yaml", "--dry-run", "--strategy", "frontier");
        assertThat(same.out()).doesNotContain("--strategy frontier:");
    }

    @Test
    void anUnknownBackendIsAUsageError() {
        CliRun r = run("run", "experiments/dsv4-h200.yaml", "--backend", "trt", "--out", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("no backend named trt").contains("sglang, vllm");
    }

    @Test
    void anUnknownStrategyIsAUsageError() {
        CliRun r = run("run", "experiments/dsv4-h200.yaml", "--strategy", "random", "--out", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .contains("the strategy is 'list' or 'frontier', not 'random'")
                .doesNotContain("--the");
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        assertThat(run("run", "--bogus").exitCode()).isEqualTo(2);
    }

    @Test
    void validateShowsABackendsCheckAndRefusesOneWithoutATokenizer() throws java.io.IOException {
        String demo = java.nio.file.Files.readString(java.nio.file.Path.of("experiments/demo.yaml"))
                .replace("  output_len: 1\n", "  output_len: 8\n")
                .replace("  num_prompts: 1\n", "  num_prompts: 2\n");
        java.nio.file.Path checked = dir.resolve("checked.yaml");
        java.nio.file.Files.writeString(checked, demo + "check: {kind: passkey, depths: [0.1, 0.9]}\n");
        CliRun ok = run("validate", checked.toString());
        assertThat(ok.exitCode()).as(ok.err()).isZero();
        assertThat(ok.out())
                .contains("  check: passkey at depth 0.5 in every step, at depths [0.1, 0.9] at the frontier, after a"
                        + " control of 256 tokens");

        java.nio.file.Path badDepth = dir.resolve("bad-depth.yaml");
        java.nio.file.Files.writeString(badDepth, demo + "check: {kind: passkey, depths: [0.1, 1]}\n");
        for (String command : java.util.List.of("validate", "run")) {
            CliRun bad = run(command, badDepth.toString());
            assertThat(bad.exitCode()).as(command).isEqualTo(2);
            assertThat(bad.err())
                    .as(command)
                    .contains("depths is a non-empty list of numbers strictly between 0")
                    .contains("1 is not between 0 and 1")
                    .doesNotContain("Exception");
        }

        java.nio.file.Path tgi = dir.resolve("tgi.yaml");
        java.nio.file.Files.writeString(tgi, demo.replace("engine: embedded", "engine: tgi") + "check: passkey\n");
        CliRun refused = run("validate", tgi.toString());
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.err())
                .contains("engine 'tgi' has none ctxprobe can ask")
                .doesNotContain("Exception");
    }

    @Test
    void aMissingFileIsAUsageError() {
        CliRun r = run("validate", dir.resolve("nope.yaml").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("no such file");
    }

    @Test
    void resumingSomethingThatIsNoRunFolderIsAUsageError() {
        CliRun r = run("run", "--resume", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("not a ctxprobe run folder");
    }

    @Test
    void theBuiltInDemoValidates() {
        CliRun r = run("run", "--dry-run");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("experiment demo").contains("ctxprobe serve");
    }

    /** An experiment with one backend of {@code engine} whose command is {@code command}. */
    private Path experiment(String model, String engine, String command) throws IOException {
        return Files.writeString(dir.resolve("e.yaml"), """
                experiment: pre
                model: %s
                hardware: {name: 8x NVIDIA H200 143GB, accelerator: NVIDIA H200, chip: nvidia_h200}
                vars: {java: '%s', cp: '%s'}
                sweep: {strategy: list, targets: [1000]}
                backends:
                  - name: b
                    engine: %s
                    command: '%s'
                """.formatted(
                        model, TestEngines.javaBin(), TestEngines.classpath(), engine, command));
    }

    private static final String TEST_ENGINE =
            "{java} -cp {cp} dev.ctxprobe.testengine.TestEngine --port {port} --max-model-len {max_model_len}";

    /** Refused before the run folder exists: exit 2, the reason, and no folder under --out (nothing launched). */
    private CliRun refused(Path experiment) {
        Path out = dir.resolve("out");
        CliRun r = run("run", experiment.toString(), "--out", out.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(2);
        assertThat(r.err()).endsWith("ctxprobe: nothing was launched\n");
        assertThat(out).doesNotExist();
        return r;
    }

    @Test
    void aProgramThatIsNotOnPathRefusesTheRun() throws IOException {
        CliRun r = refused(experiment("org/model", "vllm", "no-such-engine-xyz serve {model} --port {port}"));
        assertThat(r.err())
                .contains("ctxprobe: backend b: the program 'no-such-engine-xyz' is not on PATH; install it, activate"
                        + " the environment that has it, or give its full path in the command\n");
    }

    @Test
    void aProgramGivenAsAMissingPathRefusesTheRun() throws IOException {
        CliRun r = refused(experiment("org/model", "vllm", "./venv/bin/vllm serve {model} --port {port}"));
        assertThat(r.err())
                .contains("ctxprobe: backend b: the program ./venv/bin/vllm does not exist; fix the path at the start"
                        + " of its command\n");
    }

    @Test
    void aModelWrittenAsAMissingPathRefusesTheRunButAHubIdDoesNot() throws IOException {
        CliRun r = refused(experiment(dir.resolve("no-model").toString(), "vllm", TEST_ENGINE + " --model {model}"));
        assertThat(r.err())
                .contains("ctxprobe: backend b: the model " + dir.resolve("no-model") + " does not exist on this"
                        + " machine; fix 'model' in the experiment, or give a hub id such as"
                        + " deepseek-ai/DeepSeek-V4-Flash for the engine to download\n");
        CliRun hub = run(
                "run",
                experiment("deepseek-ai/DeepSeek-V4-Flash", "vllm", TEST_ENGINE + " --model {model}")
                        .toString(),
                "--dry-run");
        assertThat(hub.exitCode()).isZero();
        assertThat(hub.out()).doesNotContain("run would refuse");
    }

    @Test
    void llamaCppNeedsItsModelFileWhateverItLooksLike() throws IOException {
        CliRun r = refused(experiment("m", "llamacpp", TEST_ENGINE + " -m models/x.gguf"));
        assertThat(r.err())
                .contains("ctxprobe: backend b: the model file models/x.gguf (-m) does not exist; llamacpp reads only"
                        + " local files, so fix the path\n");
    }

    @Test
    void aModelFileThatIsNotAGgufIsRefusedBeforeTheLaunch() throws IOException {
        // issue 31: plan saw "no GGUF magic", yet run launched the server, which failed to load it.
        Path notGguf = Files.writeString(dir.resolve("model.safetensors"), "{\"__metadata__\": {}}");
        CliRun r = refused(experiment("m", "llamacpp", TEST_ENGINE + " -m " + notGguf));
        assertThat(r.err())
                .contains(
                        "ctxprobe: backend b: the model file " + notGguf + " (-m) is not a GGUF file (no GGUF magic in"
                                + " its first bytes); llamacpp loads GGUF files only: give the .gguf file (the first part of a"
                                + " split model)\n");
    }

    @Test
    void aMissingLlamaServerPointsAtTheScriptThatInstallsOne() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                        .noneMatch(d -> Files.isExecutable(Path.of(d.isEmpty() ? "." : d, "llama-server"))),
                "llama-server is on this machine's PATH");
        CliRun r = refused(experiment("m", "llamacpp", "llama-server -m {model} --port {port}"));
        assertThat(r.err())
                .contains("the program 'llama-server' is not on PATH")
                .contains(".ci/install-llama-server installs Debian's build");
    }

    @Test
    void anOutputFolderBehindAFileIsRefusedWithTheReason() throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "");
        CliRun r = run(
                "run",
                experiment("org/m", "vllm", TEST_ENGINE).toString(),
                "--out",
                file.resolve("results").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("ctxprobe: cannot write results to " + file.resolve("results") + ": " + file
                        + " is a file, not a folder; give another --out\n");
    }

    @Test
    void anOutputFolderTheSystemRefusesIsRefusedWithTheSystemsReason() throws IOException {
        Path locked = Files.createDirectory(dir.resolve("locked"));
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-x------"));
        // root writes through permissions; the kernel's own /sys refuses even root.
        Path denied = canWrite(locked) ? Path.of("/sys") : locked;
        org.junit.jupiter.api.Assumptions.assumeFalse(canWrite(denied), "no folder here refuses this user");
        CliRun r = run(
                "run",
                experiment("org/m", "vllm", TEST_ENGINE).toString(),
                "--out",
                denied.resolve("results").toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("ctxprobe: cannot write results to " + denied.resolve("results") + ": " + denied + ": ")
                .containsPattern(
                        ": (permission denied|read-only file system); give a folder you can write to with" + " --out\n")
                .doesNotContain("Exception");
    }

    private static boolean canWrite(Path folder) {
        try {
            Files.delete(Files.createTempFile(folder, "probe", ""));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void declaredHardwareThatIsNotThisMachineIsAWarningInTheDryRun() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeFalse(
                dev.ctxprobe.hardware.HardwareProbe.system()
                        .hardware()
                        .accelerator()
                        .contains("H200"),
                "this machine has the declared H200s");
        CliRun r = run("run", experiment("org/m", "vllm", TEST_ENGINE).toString(), "--dry-run");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("  warning: the experiment declares hardware '8x NVIDIA H200 143GB' but this machine has ")
                .contains("; the results will record the declared hardware (remove 'hardware:' to record what is"
                        + " detected)\n");
    }

    @Test
    void resumeWithAnExperimentFileIsOneSentence() {
        CliRun r = run("run", "--resume", dir.toString(), "experiments/demo.yaml");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("ctxprobe: give either EXPERIMENT.yaml or --resume RUN_DIR, not both: --resume continues a"
                        + " run with the experiment kept in its folder (experiment.yaml)\n");
    }

    @Test
    void aRunFolderGivenAsTheExperimentPointsToResume() throws IOException {
        Files.writeString(dir.resolve("experiment.yaml"), "experiment: x\n");
        Files.writeString(dir.resolve("results.json"), "{}");
        CliRun r = run("run", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo("ctxprobe: " + dir + " is a run folder: continue it with 'ctxprobe run --resume " + dir
                        + "', or start a new run of its experiment with 'ctxprobe run " + dir.resolve("experiment.yaml")
                        + "'\n");
    }

    @Test
    void aFolderGivenAsTheExperimentNamesItsFiles() throws IOException {
        Files.writeString(dir.resolve("mine.yaml"), "experiment: x\n");
        CliRun r = run("run", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .isEqualTo(dir + ": this is a folder: give one of its experiment files, e.g. "
                        + dir.resolve("mine.yaml") + "\n");
    }

    @Test
    void theDemoCanBeRunAsAList() {
        CliRun r = run("run", "--strategy", "list", "--dry-run");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("strategy list").contains("target 4096 ").contains("target 65536 ");
    }

    /** picocli's own words ("Unmatched argument at index 4", "is not an int") and its usage dump become one line. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "run a.yaml b.yaml|ctxprobe run: 'b.yaml' is one argument too many: give EXPERIMENT.yaml once",
                "run --bogus|ctxprobe run: unknown option '--bogus'",
                "run --out|ctxprobe run: --out needs a value: --out DIR",
                "serve --port abc|ctxprobe serve: Invalid value for option '--port': 'abc' is not a whole number",
                "frob|ctxprobe: unknown command 'frob'; the commands are run, validate, plan, report, serve, help",
                "validate|ctxprobe validate: Missing required parameter: 'EXPERIMENT.yaml'",
            })
    void commandLineMistakesAreOneSentence(String line, String message) {
        CliRun r = run(line.split(" "));
        assertThat(r.exitCode()).isEqualTo(2);
        String command = message.substring(0, message.indexOf(':'));
        assertThat(r.err()).isEqualTo(message + "\nTry '" + command + " --help' for more information.\n");
    }

    @Test
    void aHandEditedResultsFileIsNamedWithoutJavaTypes() throws IOException {
        Files.copy(Path.of("experiments/demo.yaml"), dir.resolve("experiment.yaml"));
        Files.writeString(
                dir.resolve("results.json"), "{\"metadata\": {}, \"scenarios\": [{\"target_len\": [\"lots\"]}]}");
        CliRun r = run("run", "--resume", dir.toString());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        dir.resolve("results.json") + ": scenarios[0].target_len: expected an integer, found an array")
                .doesNotContain("java.", "`");
    }
}
