package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.results.MatrixGrid;
import dev.ctxprobe.run.Experiments;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The matrix of an experiment file (docs/experiment-file.md#matrix): its cells, their names, values and limits. */
class MatrixTest {
    private static final Path FILE = Path.of("matrix.yaml");

    private static final String HEAD = """
            experiment: m
            model: /models/x
            sweep: {strategy: frontier, frontier: {min: 1024, max: 65536}}
            """;

    private static Experiment parse(String yaml) throws ExperimentError {
        return Experiments.loader().parse(FILE, HEAD + yaml);
    }

    @Test
    void everyCombinationIsACellNamedByItsValuesAsWrittenInTheFilesOrder() throws Exception {
        Experiment e = parse("""
                matrix:
                  mem: [0.85, 0.90, 0.95]
                  kv: [fp8, auto]
                backends:
                  - name: vllm
                    engine: vllm
                    command: vllm serve {model} --gpu-memory-utilization {mem} --kv-cache-dtype {kv}
                      --max-model-len {max_model_len} --port {port}
                """);

        assertThat(e.backends())
                .extracting(Backend::name)
                .containsExactly(
                        "vllm[mem=0.85,kv=fp8]",
                        "vllm[mem=0.85,kv=auto]",
                        "vllm[mem=0.90,kv=fp8]",
                        "vllm[mem=0.90,kv=auto]",
                        "vllm[mem=0.95,kv=fp8]",
                        "vllm[mem=0.95,kv=auto]");
        Backend cell = e.backends().get(2);
        // YAML reads 0.90 as the number 0.9: the cell keeps the text the user wrote, and its command gets it too.
        assertThat(cell.params()).containsExactly(Map.entry("mem", "0.90"), Map.entry("kv", "fp8"));
        assertThat(List.copyOf(cell.params().keySet())).containsExactly("mem", "kv");
        assertThat(cell.vars()).containsEntry("mem", "0.90");
        assertThat(cell.base()).isEqualTo("vllm");
        assertThat(ServerCommand.resolve(e, cell, 4096, 8000, null).serverArgs())
                .contains("--gpu-memory-utilization 0.90 --kv-cache-dtype fp8");
        assertThat(e.cells()).isEqualTo(6);
        assertThat(e.maxSteps()).isEqualTo(6L * Defaults.MAX_LAUNCHES);
        // Each cell is a series of its own: its points carry its values.
        assertThat(Plan.of(e).backends().get(2).strategy().series().params()).isEqualTo(cell.params());
    }

    @Test
    void aBackendsOwnMatrixGoesOnTopOfTheFilesAndABackendWithoutOneHasNoCells() throws Exception {
        Experiment e = parse("""
                matrix: {np: [1, 2]}
                backends:
                  - name: llama
                    engine: llamacpp
                    matrix: {np: [4], ctk: [f16, q8_0]}
                    command: llama-server -m {model} -c {max_model_len} -np {np} -ctk {ctk} --port {port}
                  - name: other
                    engine: llamacpp
                    command: llama-server -m {model} -c {max_model_len} -np {np} --port {port}
                """);
        assertThat(e.backends())
                .extracting(Backend::name)
                .containsExactly("llama[np=4,ctk=f16]", "llama[np=4,ctk=q8_0]", "other[np=1]", "other[np=2]");
    }

    @Test
    void aMatrixOverTheLimitIsRefusedNamingTheKeyThatRaisesIt() throws Exception {
        String matrix = """
                matrix: {a: [1, 2, 3, 4, 5], b: [1, 2, 3, 4, 5], c: [1, 2, 3]}
                backends:
                  - name: s
                    engine: vllm
                    command: s {a} {b} {c} --max-model-len {max_model_len}
                """;
        assertThatThrownBy(() -> parse(matrix))
                .isInstanceOf(ExperimentError.class)
                .hasMessageContaining("matrix.yaml:4:")
                .hasMessageContaining("the matrix makes 75 cells, more than limits.max_cells (64)")
                .hasMessageContaining("raise limits.max_cells to 75");
        assertThat(parse(matrix + "limits: {max_cells: 75}\n").cells()).isEqualTo(75);
    }

    @Test
    void aParameterTheCommandDoesNotUseOrAValueThatCannotNameACellIsRefused() {
        assertThatThrownBy(() -> parse("""
                        backends:
                          - name: s
                            engine: vllm
                            matrix: {kv: [fp8], mem: [0.9]}
                            command: s {kv} --max-model-len {max_model_len}
                        """))
                .hasMessageContaining("the parameter 'mem' is not used in the command of backend 's'")
                .hasMessageContaining("put {mem} in the command");
        assertThatThrownBy(() -> parse("""
                        backends:
                          - name: s
                            engine: vllm
                            matrix: {model_dir: [/a/b]}
                            command: s {model_dir} --max-model-len {max_model_len}
                        """)).hasMessageContaining("the value '/a/b' names the cell and its log files");
        assertThatThrownBy(() -> parse("""
                        backends:
                          - name: s
                            engine: vllm
                            matrix: {kv: fp8}
                            command: s {kv} --max-model-len {max_model_len}
                        """))
                .hasMessageContaining("backends[0].matrix.kv is a list of the values to try");
        assertThatThrownBy(() -> parse("""
                        backends:
                          - name: s
                            engine: vllm
                            matrix: {port: [1, 2]}
                            command: s {port} --max-model-len {max_model_len}
                        """)).hasMessageContaining("'port' is set by ctxprobe");
    }

    @Test
    void backendChoosesCellsByNameBaseValueOrBaseWithValues() throws Exception {
        Experiment e = parse("""
                matrix: {ctk: [f16, q8_0], np: [1, 2]}
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m {model} -c 8192 -ctk {ctk} -np {np} --port {port}
                  - name: twin
                    engine: llamacpp
                    command: llama-server -m {model} -c 8192 -ctk {ctk} -np {np} --port {port}
                """);
        assertThat(names(e.withBackends(List.of("llama[ctk=f16,np=2]")))).containsExactly("llama[ctk=f16,np=2]");
        assertThat(names(e.withBackends(List.of("twin")))).hasSize(4).allMatch(n -> n.startsWith("twin["));
        assertThat(names(e.withBackends(List.of("np=2"))))
                .containsExactly(
                        "llama[ctk=f16,np=2]", "llama[ctk=q8_0,np=2]", "twin[ctk=f16,np=2]", "twin[ctk=q8_0,np=2]");
        assertThat(names(e.withBackends(List.of("llama[np=1]", "twin[ctk=q8_0,np=1]"))))
                .containsExactly("llama[ctk=f16,np=1]", "llama[ctk=q8_0,np=1]", "twin[ctk=q8_0,np=1]");
        assertThatThrownBy(() -> e.withBackends(List.of("np=3")))
                .hasMessageContaining("no backend named np=3")
                .hasMessageContaining("choose cells by name, by base name, by k=v, or by base[k=v]");
    }

    @Test
    void theGridPutsTheFirstParameterDownTheSecondAcrossAndTheRestInTablesOfTheirOwnInTheFilesOrder() throws Exception {
        Experiment e = parse("""
                matrix: {np: [2, 1], ctk: [q8_0, f16], fa: ["on", "off"]}
                backends:
                  - name: llama
                    engine: llamacpp
                    command: llama-server -m {model} -c 8192 -np {np} -ctk {ctk} -fa {fa} --port {port}
                """);
        List<MatrixGrid.Cell> cells = e.backends().stream()
                .map(b -> new MatrixGrid.Cell(b.name(), b.params()))
                .toList();
        List<MatrixGrid> grids = MatrixGrid.of(cells.reversed(), MatrixGrid.orderOf(cells));

        assertThat(grids).extracting(MatrixGrid::title).containsExactly("llama with fa=on", "llama with fa=off");
        MatrixGrid on = grids.getFirst();
        assertThat(on.down()).isEqualTo("np");
        assertThat(on.across()).isEqualTo("ctk");
        assertThat(on.rows()).as("the file's order, not the alphabet's").containsExactly("2", "1");
        assertThat(on.columns()).containsExactly("q8_0", "f16");
        assertThat(on.at("1", "f16")).isEqualTo("llama[np=1,ctk=f16,fa=on]");
        assertThat(grids.get(1).at("2", "q8_0")).isEqualTo("llama[np=2,ctk=q8_0,fa=off]");
    }

    private static List<String> names(Experiment e) {
        return e.backends().stream().map(Backend::name).toList();
    }
}
