package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The defaults users read in docs/experiment-file.md are the ones a file gets: each table's default column against
 * {@link Defaults}, and a file that leaves every optional key out against the loaded experiment.
 */
class DefaultsTest {
    private static final Path DOC = Path.of("docs", "experiment-file.md");

    static Stream<Arguments> documented() {
        return Stream.of(
                arguments("Top-level keys", "context_pad", Defaults.CONTEXT_PAD),
                arguments("`load`", "output_len", Defaults.OUTPUT_LEN),
                arguments("`load`", "num_prompts", Defaults.NUM_PROMPTS),
                arguments("`load`", "max_concurrency", Defaults.MAX_CONCURRENCY),
                arguments("`load`", "request_rate", Double.isInfinite(Defaults.REQUEST_RATE) ? "inf" : "?"),
                arguments("`load`", "warmup", Defaults.WARMUP),
                arguments("`load`", "verify", Defaults.LENIENT_VERIFY ? "lenient" : "strict"),
                arguments("`sweep`", "strategy", Defaults.STRATEGY.id()),
                arguments("`sweep`", "frontier.precision", Defaults.PRECISION),
                arguments("`sweep`", "frontier.align", Defaults.ALIGN),
                arguments("`sweep`", "frontier.max_launches", Defaults.MAX_LAUNCHES),
                arguments("`sweep`", "frontier.start", Defaults.START.id()),
                arguments("`sweep`", "restart", Defaults.RESTART.name().toLowerCase(Locale.ROOT)),
                arguments("`timeouts`", "startup_s", Defaults.STARTUP.toSeconds()),
                arguments("`timeouts`", "request_s", Defaults.REQUEST.toSeconds()),
                arguments("`timeouts`", "shutdown_s", Defaults.SHUTDOWN.toSeconds()),
                arguments("`timeouts`", "queue_s", Defaults.QUEUE.toSeconds()),
                arguments("`timeouts`", "fatal_grace_s", Defaults.FATAL_GRACE.toSeconds()),
                arguments("`timeouts`", "stall_s", Defaults.STALL.toSeconds()),
                arguments("`timeouts`", "progress_s", Defaults.PROGRESS.toSeconds()),
                arguments("`backends`", "host", Defaults.HOST),
                arguments("`limits`", "server_log_mib", Defaults.SERVER_LOG_MIB));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("documented")
    void theDocsStateTheDefault(String section, String key, Object value) throws IOException {
        assertThat(documentedDefault(section, key)).isEqualTo("`" + value + "`");
    }

    @Test
    void aFileThatLeavesKeysOutGetsTheDefaults() throws ExperimentError {
        Experiment e =
                new ExperimentLoader(Set.of("vllm"), ExperimentLoader.LOCAL_ONLY).parse(Path.of("exp.yaml"), """
                        experiment: t
                        sweep: {strategy: frontier, frontier: {min: 4096, max: 65536}}
                        backends:
                          - {name: a, engine: vllm, command: 'vllm serve --max-model-len {max_model_len}'}
                        """);
        assertThat(e.contextPad()).isEqualTo(Defaults.CONTEXT_PAD);
        assertThat(e.load())
                .isEqualTo(new Experiment.Load(
                        Defaults.OUTPUT_LEN,
                        Defaults.NUM_PROMPTS,
                        Defaults.MAX_CONCURRENCY,
                        Defaults.REQUEST_RATE,
                        Defaults.WARMUP,
                        Defaults.LENIENT_VERIFY));
        assertThat(e.sweep().restart()).isEqualTo(Defaults.RESTART);
        assertThat(e.sweep().frontier())
                .isEqualTo(new Experiment.Frontier(
                        4096, 65536, Defaults.PRECISION, Defaults.ALIGN, Defaults.MAX_LAUNCHES, Defaults.START));
        assertThat(e.timeouts())
                .isEqualTo(
                        new Experiment.Timeouts(Defaults.STARTUP, Defaults.REQUEST, Defaults.SHUTDOWN, Defaults.QUEUE));
        assertThat(e.backends().getFirst().host()).isEqualTo(Defaults.HOST);
        assertThat(e.backends().getFirst().startup()).isEqualTo(Defaults.STARTUP);
        assertThat(e.limits().serverLogMib()).isEqualTo(Defaults.SERVER_LOG_MIB);
    }

    // The cell under "default" in the row of `key`, within the table under the heading "## section".
    private static String documentedDefault(String section, String key) throws IOException {
        List<String> lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
        int at = lines.indexOf("## " + section);
        assertThat(at).as("heading ## %s in %s", section, DOC).isNotNegative();
        int column = -1;
        for (String line : lines.subList(at + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            List<String> cells = cells(line);
            if (cells.contains("default")) {
                column = cells.indexOf("default");
            } else if (column >= 0 && !cells.isEmpty() && cells.getFirst().equals("`" + key + "`")) {
                return cells.get(column);
            }
        }
        throw new AssertionError("no row for `" + key + "` under ## " + section + " in " + DOC);
    }

    private static List<String> cells(String line) {
        if (!line.startsWith("|")) {
            return List.of();
        }
        return Arrays.stream(line.substring(1).split("\\|")).map(String::strip).toList();
    }
}
