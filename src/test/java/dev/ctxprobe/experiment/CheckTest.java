package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@code check} in the experiment file (docs/experiment-file.md#check). */
class CheckTest {
    private static final Path FILE = Path.of("exp.yaml");
    private final ExperimentLoader loader =
            new ExperimentLoader(Set.of("vllm", "openai"), Set.of(), Set.of("vllm"), ExperimentLoader.LOCAL_ONLY);

    private static final String FILE_TEXT = """
            experiment: t1
            model: /m
            load: {output_len: 8, num_prompts: 3}
            sweep: {strategy: list, targets: [1024]}
            backends:
              - name: a
                engine: vllm
                command: vllm serve {model} --max-model-len {max_model_len} --port {port}
              - name: b
                engine: vllm
                command: vllm serve {model} --max-model-len {max_model_len} --port {port}
            """;

    private Experiment parse(String text) throws ExperimentError {
        return loader.parse(FILE, text);
    }

    private String error(String text) {
        return catchThrowableOfType(ExperimentError.class, () -> parse(text)).getMessage();
    }

    @Test
    void noCheckByDefault() throws ExperimentError {
        assertThat(parse(FILE_TEXT).backends()).allMatch(b -> b.check() == null);
    }

    @Test
    void theFilesCheckReachesEveryBackendAndABackendMayTurnItOff() throws ExperimentError {
        Experiment e = parse("check: passkey\n"
                + FILE_TEXT.replace(
                        "  - name: b\n    engine: vllm\n", "  - name: b\n    engine: vllm\n    check: none\n"));
        assertThat(e.backends().get(0).check()).isEqualTo(new Check(List.of(0.1, 0.5, 0.9), 256));
        assertThat(e.backends().get(1).check()).isNull();
    }

    @Test
    void depthsAndControlLengthAreRead() throws ExperimentError {
        Experiment e = parse(
                FILE_TEXT.replace(
                        "    engine: vllm\n    command: vllm serve {model} --max-model-len {max_model_len} --port {port}\n  - name: b",
                        "    engine: vllm\n    check: {kind: passkey, depths: [0.1, 0.5, 0.9], control_len: 2048}\n"
                                + "    command: vllm serve {model} --max-model-len {max_model_len} --port {port}\n  - name: b"));
        assertThat(e.backends().get(0).check()).isEqualTo(new Check(List.of(0.1, 0.5, 0.9), 2048));
        assertThat(e.backends().get(1).check()).isNull();
    }

    @Test
    void anEngineWithoutATokenizerIsRefusedWithWhatToDo() {
        String openai = "check: passkey\n" + FILE_TEXT.replaceFirst("engine: vllm", "engine: openai");
        assertThat(error(openai))
                .contains("engine 'openai' has none ctxprobe can ask")
                .contains("give this backend 'check: none', or name the engine it really runs (vllm)");
    }

    @Test
    void badValuesSayWhatIsExpected() {
        assertThat(error("check: needle\n" + FILE_TEXT)).contains("unknown check 'needle'");
        assertThat(error("check: {kind: passkey, control_len: 10}\n" + FILE_TEXT))
                .contains("control_len is the length in tokens of the short control, at least 64");
        assertThat(error("check: {kind: passkey, depth: 0.5}\n" + FILE_TEXT))
                .contains("unknown key 'depth'; did you mean 'depths'?");
    }

    @Test
    void theKeyNeedsOutputTokens() {
        assertThat(error("check: passkey\n" + FILE_TEXT.replace("output_len: 8", "output_len: 1")))
                .contains("set load.output_len to 8 or more");
    }

    @Test
    void moreDepthsThanMeasuredRequestsAreFine() throws ExperimentError {
        Experiment e = parse("check: {kind: passkey, depths: [0.1, 0.25, 0.5, 0.75, 0.9]}\n" + FILE_TEXT);
        assertThat(e.backends().get(0).check().depths()).containsExactly(0.1, 0.25, 0.5, 0.75, 0.9);
    }

    @Test
    void badDepthsSayWhatIsExpectedAndWhatIsWrong() {
        String usage = "depths is a non-empty list of numbers strictly between 0 (just after the opening)"
                + " and 1 (just before the question), e.g. [0.1, 0.5, 0.9]";
        assertThat(error("check: {kind: passkey, depths: [1.5]}\n" + FILE_TEXT))
                .contains(usage)
                .contains("1.5 is not between 0 and 1");
        assertThat(error("check: {kind: passkey, depths: [0, 0.5]}\n" + FILE_TEXT))
                .contains("0 is not between 0 and 1");
        assertThat(error("check: {kind: passkey, depths: [0.5, 1]}\n" + FILE_TEXT))
                .contains("1 is not between 0 and 1");
        assertThat(error("check: {kind: passkey, depths: [-0.1]}\n" + FILE_TEXT))
                .contains("-0.1 is not between 0 and 1");
        assertThat(error("check: {kind: passkey, depths: []}\n" + FILE_TEXT))
                .contains(usage)
                .contains("not an empty list");
        assertThat(error("check: {kind: passkey, depths: [0.1, middle]}\n" + FILE_TEXT))
                .contains("middle is not a number");
        assertThat(error("check: {kind: passkey, depths: ['0.5']}\n" + FILE_TEXT))
                .contains("0.5 is not a number");
        assertThat(error("check: {kind: passkey, depths: [true]}\n" + FILE_TEXT))
                .contains("true is not a number");
        assertThat(error("check: {kind: passkey, depths: .nan}\n" + FILE_TEXT)).contains(usage);
        assertThat(error("check: {kind: passkey, depths: [.nan]}\n" + FILE_TEXT))
                .contains("is not between 0 and 1");
        assertThat(error("check: {kind: passkey, depths: 0.5}\n" + FILE_TEXT)).contains(usage + ", not 0.5");
        assertThat(error("check: {kind: passkey, depths: [0.5, 0.5]}\n" + FILE_TEXT))
                .contains("0.5 is listed twice");
        assertThat(error("check: {kind: passkey, depths: }\n" + FILE_TEXT)).contains(usage);
    }
}
