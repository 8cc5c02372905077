package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A matrix through the commands that launch nothing: {@code validate}, {@code plan}, {@code run --dry-run}. */
class MatrixCommandsTest {
    private static final String THREE_BY_THREE = """
            experiment: grid
            model: micro
            context_pad: 1024
            matrix:
              kv: [2MiB, 4MiB, 8MiB]
              threads: [1, 2, 4]
            sweep:
              strategy: frontier
              frontier: {min: 1024, max: 65536, max_launches: 6}
            backends:
              - name: embedded
                engine: embedded
                command: ctxprobe serve --port {port} --ctx-size {max_model_len} --kv-memory {kv} --threads {threads}
            """;

    @TempDir
    Path dir;

    @Test
    void validateOfAThreeByThreeMatrixPrintsNineCellsCommandsAndSaysWhatItMultipliesTo() throws Exception {
        Path file = Files.writeString(dir.resolve("grid.yaml"), THREE_BY_THREE);
        CliRun r = CliRun.of("validate", file.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("matrix: 9 cells, at most 54 steps (limits.max_cells 64)");
        assertThat(r.out().lines().filter(l -> l.startsWith("backend embedded[")))
                .hasSize(9)
                .contains("backend embedded[kv=2MiB,threads=1] (engine embedded, port picked at each launch)")
                .contains("backend embedded[kv=8MiB,threads=4] (engine embedded, port picked at each launch)");
        assertThat(r.out().lines().filter(l -> l.startsWith("    server_args: ")))
                .hasSize(9)
                .anyMatch(l -> l.endsWith("--kv-memory 4MiB --threads 2"));
    }

    @Test
    void planPrintsTheGridOfPredictionsInTheFilesOrder() throws Exception {
        Path file = Files.writeString(dir.resolve("grid.yaml"), THREE_BY_THREE);
        CliRun r = CliRun.of("plan", file.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("matrix embedded: predicted frontier (what sets it)\n"
                        + "kv \\ threads  1                   2                   4\n"
                        + "2MiB          9,728 (KV memory)   9,728 (KV memory)   9,728 (KV memory)\n"
                        + "4MiB          20,736 (KV memory)  20,736 (KV memory)  20,736 (KV memory)\n"
                        + "8MiB          42,496 (KV memory)  42,496 (KV memory)  42,496 (KV memory)\n");
    }

    @Test
    void aMatrixOverTheLimitIsRefusedWithExitTwoAndTheKeyThatRaisesIt() throws Exception {
        Path file = Files.writeString(
                dir.resolve("grid.yaml"),
                THREE_BY_THREE
                        .replace("threads: [1, 2, 4]", "threads: [1, 2, 3, 4, 5, 6, 7, 8]")
                        .replace(
                                "kv: [2MiB, 4MiB, 8MiB]",
                                "kv: [1MiB, 2MiB, 3MiB, 4MiB, 5MiB, 6MiB, 7MiB, 8MiB, 9MiB]"));
        for (String command : new String[] {"validate", "plan"}) {
            CliRun r = CliRun.of(command, file.toString());
            assertThat(r.exitCode()).as(command).isEqualTo(2);
            assertThat(r.err())
                    .as(command)
                    .contains("grid.yaml:5:3: ")
                    .contains("the matrix makes 72 cells, more than limits.max_cells (64)")
                    .contains("raise limits.max_cells to 72")
                    .doesNotContain("Exception");
        }
        CliRun dry = CliRun.of("run", "--dry-run", file.toString());
        assertThat(dry.exitCode()).isEqualTo(2);
        assertThat(dry.err()).contains("limits.max_cells");
    }

    @Test
    void runChoosesCellsByAValueAndRefusesASelectorThatChoosesNothing() throws Exception {
        Path file = Files.writeString(dir.resolve("grid.yaml"), THREE_BY_THREE);
        CliRun r = CliRun.of(
                "run", "--dry-run", "--backend", "threads=2", "--backend", "embedded[kv=8MiB]", file.toString());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out().lines().filter(l -> l.startsWith("backend embedded[")))
                .containsExactly(
                        "backend embedded[kv=2MiB,threads=2] (engine embedded, port picked at each launch)",
                        "backend embedded[kv=4MiB,threads=2] (engine embedded, port picked at each launch)",
                        "backend embedded[kv=8MiB,threads=1] (engine embedded, port picked at each launch)",
                        "backend embedded[kv=8MiB,threads=2] (engine embedded, port picked at each launch)",
                        "backend embedded[kv=8MiB,threads=4] (engine embedded, port picked at each launch)");

        CliRun none = CliRun.of("run", "--dry-run", "--backend", "threads=3", file.toString());
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.err()).contains("no backend named threads=3").doesNotContain("Exception");
    }
}
