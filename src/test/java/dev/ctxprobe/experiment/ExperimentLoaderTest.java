package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ExperimentLoaderTest {
    private static final Path FILE = Path.of("exp.yaml");
    private final ExperimentLoader loader =
            new ExperimentLoader(Set.of("vllm", "sglang", "openai"), ExperimentLoader.LOCAL_ONLY);

    private static final String GOOD = """
            experiment: t1
            model: /m
            vars:
              tp: 8
            sweep:
              strategy: list
              targets: [1024, 2048]
            backends:
              - name: a
                engine: vllm
                port: 30012
                command: vllm serve {model} --tp {tp} --max-model-len {max_model_len} --port {port}
            """;

    @Test
    void autoFirstNeedsAnEngineThatSizesItselfAndAPlaceForTheLength() throws ExperimentError {
        ExperimentLoader sizing =
                new ExperimentLoader(Set.of("vllm", "sglang", "openai"), Set.of("vllm"), ExperimentLoader.LOCAL_ONLY);
        String auto = GOOD.replace("    engine: vllm\n", "    engine: vllm\n    auto_first: true\n");
        assertThat(sizing.parse(FILE, auto).backends().getFirst().autoFirst()).isTrue();
        assertThat(sizing.parse(FILE, GOOD).backends().getFirst().autoFirst()).isFalse();

        ExperimentError sglang = catchThrowableOfType(
                ExperimentError.class, () -> sizing.parse(FILE, auto.replace("engine: vllm", "engine: sglang")));
        assertThat(sglang.getMessage())
                .contains("engine 'sglang' cannot fit its context to memory itself; auto_first works with vllm");
        ExperimentError noLength = catchThrowableOfType(
                ExperimentError.class,
                () -> sizing.parse(FILE, auto.replace("--max-model-len {max_model_len}", "--max-model-len 4096")));
        assertThat(noLength.getMessage())
                .contains("auto_first replaces {max_model_len} in the command, which has none");
    }

    @Test
    void appliesDefaults() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD);
        assertThat(e.contextPad()).isEqualTo(1024);
        assertThat(e.load().outputLen()).isEqualTo(1);
        assertThat(e.load().warmup()).isEqualTo(1);
        assertThat(e.load().requestRate()).isInfinite();
        assertThat(e.timeouts().startup()).isEqualTo(Duration.ofSeconds(1800));
        assertThat(e.backends().getFirst().host()).isEqualTo("127.0.0.1");
        assertThat(e.vars()).containsEntry("tp", 8);
        ServerCommand c = ServerCommand.resolve(e, e.backends().getFirst(), 2048, 30012);
        assertThat(c.serverArgs()).isEqualTo("vllm serve /m --tp 8 --max-model-len 3072 --port 30012");
    }

    @Test
    void backendVarsAndEnvWinOverTheTopLevel() throws ExperimentError {
        Experiment e = loader.parse(
                FILE,
                GOOD.replace("vars:\n  tp: 8", "vars:\n  tp: 8\nenv:\n  A: top\n  B: top")
                        + "    vars: {tp: 4}\n    env: {B: own}\n");
        Experiment.Backend b = e.backends().getFirst();
        assertThat(b.vars()).containsEntry("tp", 4);
        assertThat(b.env()).containsEntry("A", "top").containsEntry("B", "own");
    }

    /** Each mistake: what to replace in GOOD, the line and column expected, and words of the message. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "model: /m|model: /m\\nmodle: x|3|1|unknown key 'modle'; did you mean 'model'?; the keys allowed",
                "model: /m|model: /m\\nxyzzy: x|3|1|unknown key 'xyzzy'; the keys allowed",
                "  targets: [1024, 2048]|  targets: [1024, -5]|7|19|above 0",
                "  targets: [1024, 2048]|  targets: [1024, 2147483000]|7|19|exceeds",
                "    port: 30012|    port: 70000|11|11|outside 1..65535",
                "    port: 30012|    port: abc|11|11|whole number",
                "{tp}|{tq}|12|14|unknown placeholder {tq}",
                "    engine: vllm|    engine: vllmx|10|13|unknown engine 'vllmx'; did you mean 'vllm'?; use one of",
                "    engine: vllm|    engine: SGLang|10|13|unknown engine 'SGLang'; did you mean 'sglang'?",
                "  strategy: list|  strategy: bisect|6|13|'list' or 'frontier'",
                "  tp: 8|  tp: [8]|4|7|single text",
                "experiment: t1|experiment: 'a/b'|1|13|folder name",
                "    port: 30012|    port: 30012\\n    health_path: /health x|12|18|without spaces",
                "model: /m|model: /m\\nload: {output_len: '1'}|3|20|whole number",
                "model: /m|model: /m\\ncontext_pad: 9223372036854775000|3|14|below 2147483647",
                "model: /m|model: /m\\nweights_gib: 0|3|14|above 0",
                "model: /m|model: /m\\nmodel_config: ' '|3|15|config.json",
                "model: /m|model: /m\\nhardware: {devices: 0}|3|21|number of accelerators",
                "model: /m|model: /m\\nhardware: {memory_gib: -141}|3|24|above 0",
                "    port: 30012|    port: 30012\\n    weights_gib: '80'|12|18|a number",
            })
    void mistakesAreLocated(String from, String to, int line, int column, String words) {
        String text = GOOD.replace(from, to.replace("\\n", "\n"));
        assertThat(text).isNotEqualTo(GOOD);
        ExperimentError err = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, text));
        assertThat(err).as("expected an error for %s", to).isNotNull();
        assertThat(err.getMessage()).contains(words);
        assertThat(err.line()).isEqualTo(line);
        assertThat(err.column()).isEqualTo(column);
        assertThat(err.getMessage()).startsWith("exp.yaml:" + line + ":" + column + ": ");
    }

    @Test
    void sizingFactsAreReadAtTheTopAndPerBackend() throws ExperimentError {
        Experiment e = loader.parse(
                FILE,
                GOOD.replace(
                                "model: /m",
                                "model: /m\nmodel_config: cfg/config.json\nweights_gib: 152.5\n"
                                        + "hardware: {name: box, devices: 8, memory_gib: 141}")
                        + "    model_config: other.json\n    weights_gib: 80\n");
        assertThat(e.modelConfig()).isEqualTo("cfg/config.json");
        assertThat(e.weightsGib()).isEqualTo(152.5);
        assertThat(e.hardware().devices()).isEqualTo(8);
        assertThat(e.hardware().memoryGib()).isEqualTo(141.0);
        assertThat(e.hardware().name()).isEqualTo("box");
        Experiment.Backend b = e.backends().getFirst();
        assertThat(b.modelConfig()).isEqualTo("other.json");
        assertThat(b.weightsGib()).isEqualTo(80.0);
    }

    @Test
    void duplicateBackendNamesAreRefused() {
        String text = GOOD + """
                  - name: a
                    engine: sglang
                    command: sglang serve --port {port}
                """;
        ExperimentError err = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, text));
        assertThat(err.getMessage()).contains("used twice");
        assertThat(err.line()).isEqualTo(13);
    }

    @Test
    void brokenYamlIsReportedWithItsPosition() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class, () -> loader.parse(FILE, GOOD.replace("[1024, 2048]", "[1024, 2048")));
        assertThat(err.getMessage()).contains("not valid YAML");
        assertThat(err.line()).isGreaterThan(0);
    }

    @Test
    void frontierNeedsBounds() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class, () -> loader.parse(FILE, GOOD.replace("strategy: list", "strategy: frontier")));
        assertThat(err.getMessage()).contains("needs bounds");
    }

    @Test
    void anEndpointWithoutLaunchNeedsNoCommand() throws ExperimentError {
        Experiment e = loader.parse(
                FILE, GOOD.replace("engine: vllm", "engine: openai").replaceAll("    command: .*\\n", ""));
        assertThat(e.backends().getFirst().command()).isNull();
    }

    @Test
    void aMissingCommandIsRefusedWhereNoEndpointIsNamed() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(
                        FILE, GOOD.replaceAll("    command: .*\\n", "").replace("    port: 30012\n", "")));
        assertThat(err.getMessage())
                .contains("'backends[0].command' is missing")
                .contains("or the 'port' of an endpoint that is already running");
    }

    @Test
    void aBackendWithAPortAndNoCommandIsAnEndpointAlreadyRunning() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replaceAll("    command: .*\\n", ""));
        assertThat(e.backends().getFirst().launcher().kind()).isEqualTo(Defaults.EXTERNAL_LAUNCHER);
        assertThat(e.backends().getFirst().engine()).isEqualTo("vllm");
    }

    @Test
    void theExternalLauncherStartsNothingSoItTakesNoCommand() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(
                        FILE, GOOD.replace("    port: 30012\n", "    port: 30012\n    launcher: external\n")));
        assertThat(err.getMessage())
                .contains("the external launcher starts nothing")
                .contains("remove 'command'");
    }

    @Test
    void anExplicitLauncherThatStartsServersNeedsTheCommand() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(
                        FILE,
                        GOOD.replaceAll("    command: .*\\n", "")
                                .replace("    port: 30012\n", "    port: 30012\n    launcher: local\n")));
        assertThat(err.getMessage()).contains("'backends[0].command' is missing");
    }

    @Test
    void anEndpointAlreadyRunningCannotSizeItselfOnFirstLaunch() {
        ExperimentLoader sizing =
                new ExperimentLoader(Set.of("vllm", "sglang", "openai"), Set.of("vllm"), ExperimentLoader.LOCAL_ONLY);
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> sizing.parse(
                        FILE,
                        GOOD.replaceAll("    command: .*\\n", "")
                                .replace("    engine: vllm\n", "    engine: vllm\n    auto_first: true\n")));
        assertThat(err.getMessage()).contains("auto_first").contains("is not launched");
    }

    /**
     * Values of the wrong kind are named in the file's words, never in Java's: no type name, no advice about
     * coercion settings, and a hint about quotes only where removing them would fix the value.
     */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "context_pad: lots|'context_pad' must be a whole number, not the text 'lots'",
                "context_pad: '12'|'context_pad' must be a whole number, not the text '12': remove the quotes",
                "context_pad: 1.5|'context_pad' must be a whole number, not the number 1.5",
                "context_pad: [1]|'context_pad' must be a whole number, not a list",
                "load: {num_prompts: yes}|'load.num_prompts' must be a whole number, not the text 'yes'",
                "load: {warmup: 99999999999}|'load.warmup' is too large: write a whole number up to 2,147,483,647",
                "context_pad: 99999999999999999999999|'context_pad' is too large: write a whole number up to"
                        + " 9,223,372,036,854,775,807",
                "timeouts: {startup_s: ten}|'timeouts.startup_s' must be a number, not the text 'ten'",
                "timeouts: {startup_s: '60'}|'timeouts.startup_s' must be a number, not the text '60': remove the quotes",
                "description: {a: 1}|'description' must be a text value, not a mapping",
                "load: 3|'load' must be a mapping of keys to values, not the number 3",
            })
    void wrongKindsOfValueAreNamedInTheFilesWords(String line, String message) {
        String text = GOOD.replace("model: /m", "model: /m\n" + line);
        ExperimentError err = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, text));
        assertThat(err).as(line).isNotNull();
        assertThat(err.problem()).isEqualTo(message);
        assertThat(err.getMessage()).doesNotContain("java.", "Cannot", "coerc", "`", "quotes that");
    }

    @Test
    void aFileThatIsNoMappingSaysWhatAnExperimentHolds() {
        ExperimentError err = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, "- a\n- b\n"));
        assertThat(err.problem())
                .isEqualTo("the file must hold keys with values (experiment:, model:, sweep:, backends:), not a list;"
                        + " start from experiments/demo.yaml");
    }

    @ParameterizedTest
    @CsvSource({".inf", "inf", "Infinity", "\".inf\""})
    void anInfiniteRequestRateIsWrittenAsYamlAllows(String rate) throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replace("model: /m", "model: /m\nload: {request_rate: " + rate + "}"));
        assertThat(e.load().requestRate()).isInfinite();
    }

    @Test
    void aFolderGivenAsTheExperimentNamesItsFiles(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        java.nio.file.Files.writeString(dir.resolve("b.yaml"), GOOD);
        java.nio.file.Files.writeString(dir.resolve("a.yaml"), GOOD);
        ExperimentError err = catchThrowableOfType(ExperimentError.class, () -> loader.load(dir));
        assertThat(err.getMessage())
                .isEqualTo(dir + ": this is a folder: give one of its experiment files, e.g. " + dir.resolve("a.yaml")
                        + " (it holds a.yaml, b.yaml)");
        ExperimentError empty = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.load(dir.resolve("sub").toFile().mkdir() ? dir.resolve("sub") : dir));
        assertThat(empty.problem())
                .isEqualTo("this is a folder: give the path of an experiment file (see experiments/)");
    }

    @Test
    void aCommandStartingWithAPlaceholderIsToldToBeQuoted() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(FILE, GOOD.replace("command: vllm serve", "command: {tp} vllm serve")));
        assertThat(err.problem())
                .isEqualTo(
                        "not valid YAML: expected <block end>, but found '<scalar>' (while parsing a block mapping);"
                                + " a value that starts with a {placeholder} must be quoted, e.g. command: '{java} -jar x.jar'");
    }

    @Test
    void anInfiniteTimeoutIsRefusedInTheFilesWords() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(FILE, GOOD.replace("model: /m", "model: /m\ntimeouts: {startup_s: .inf}")));
        assertThat(err.problem())
                .isEqualTo("timeouts.startup_s is a number of seconds above 0, found .inf: give a finite number, e.g."
                        + " 1800");
    }
}
