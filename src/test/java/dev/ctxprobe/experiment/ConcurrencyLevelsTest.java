package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 25: {@code sweep.concurrency} names the levels of the capacity map; a file without it is a sweep of single
 * prompts, and a mistake is refused at its position with what to write instead.
 */
class ConcurrencyLevelsTest {
    private static final Path FILE = Path.of("exp.yaml");
    private final ExperimentLoader loader = new ExperimentLoader(Set.of("llamacpp"), ExperimentLoader.LOCAL_ONLY);

    private static final String GOOD = """
            experiment: t1
            model: /m
            load: {output_len: 16}
            sweep:
              strategy: frontier
              frontier: {min: 256, max: 16384, align: 256}
              concurrency: [1, 2, 4, 8]
            backends:
              - name: a
                engine: llamacpp
                command: llama-server -m {model} -c {max_model_len} --port {port}
            """;

    @Test
    void levelsAreReadAscending() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replace("[1, 2, 4, 8]", "[8, 1, 4, 2]"));
        assertThat(e.sweep().concurrency()).containsExactly(1, 2, 4, 8);
        assertThat(e.sweep().concurrent()).containsExactly(2, 4, 8);
    }

    @Test
    void withoutTheKeyOnlySinglePromptsAreSent() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replace("  concurrency: [1, 2, 4, 8]\n", ""));
        assertThat(e.sweep().concurrency()).isEqualTo(List.of(1));
        assertThat(e.sweep().concurrent()).isEmpty();
        assertThat(e.load().maxConcurrency()).isEqualTo(1);
    }

    @Test
    void autoLeavesTheLevelsToWhatTheFirstServerStates() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replace("[1, 2, 4, 8]", "auto"));
        assertThat(e.sweep().autoConcurrency()).isTrue();
        assertThat(e.sweep().concurrency()).containsExactly(1);
        assertThat(e.sweep().mapped()).isTrue();
        ExperimentError short_ = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(
                        FILE, GOOD.replace("[1, 2, 4, 8]", "auto").replace("output_len: 16", "output_len: 1")));
        assertThat(short_.getMessage()).contains("needs 'load: {output_len: 16}'");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "[1, 2, 4, 8]|[2, 4]|sweep.concurrency must include 1",
                "[1, 2, 4, 8]|[1, 2, 2]|the concurrency 2 is listed twice",
                "[1, 2, 4, 8]|[1, 0]|whole numbers from 1 to 1024, found 0",
                "[1, 2, 4, 8]|[1, 2000]|whole numbers from 1 to 1024, found 2000",
                "[1, 2, 4, 8]|[]|lists requests sent at once",
                "[1, 2, 4, 8]|many|or is auto",
                "[1, 2, 4, 8]|[1, two]|whole numbers from 1 to 1024, found two",
                "output_len: 16|output_len: 1|needs 'load: {output_len: 16}'",
                "strategy: frontier|strategy: list\\n  targets: [1024]|needs 'strategy: frontier'",
            })
    void mistakesAreRefusedWithWhatToWrite(String from, String to, String words) {
        String text = GOOD.replace(from, to.replace("\\n", "\n"));
        assertThat(text).isNotEqualTo(GOOD);
        ExperimentError e = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.getMessage()).contains(words);
        assertThat(e.line()).as(e.getMessage()).isPositive();
    }
}
