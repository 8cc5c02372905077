package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A matrix run's reports (docs/results.md#matrix), from the real llama-server's run of -ctk by -np: the grid in the
 * file's order, one CSV row per cell, and two runs matched by their cells' parameters, not their names.
 */
class MatrixReportTest {

    @TempDir
    Path dir;

    @Test
    void theTextGridHasOneParameterDownOneAcrossAndTheLaunchesPerCell() {
        String text = Reports.render(ReportFixtures.read(ReportFixtures.MATRIX), Format.TEXT);

        assertThat(text)
                .contains("matrix llama: frontier · what fails above it · TTFT there · prediction's error\n"
                        + "ctk \\ np  1                 2\n"
                        + "f16       4,095             2,047\n"
                        + "          request_rejected  request_rejected\n"
                        + "          TTFT 1.5 s        TTFT 1.6 s\n"
                        + "          predicted exact   predicted exact\n")
                .contains("8 launches for 4 cells, 2.0 a cell\n");
        // --wide keeps a cell on one line.
        assertThat(Reports.render(ReportFixtures.read(ReportFixtures.MATRIX), Format.TEXT, true))
                .contains("ctk \\ np  1                                                        2\n"
                        + "f16       4,095 · request_rejected · TTFT 1.5 s · predicted exact  2,047 ·"
                        + " request_rejected · TTFT 1.6 s · predicted exact\n");
        assertThat(Reports.render(ReportFixtures.read(ReportFixtures.MATRIX), Format.MD))
                .contains("| ctk \\\\ np | 1 | 2 |\n| --- | --- | --- |\n");
    }

    @Test
    void theCsvHasOneRowPerCellWithItsParametersAsColumns() {
        List<String> rows = Reports.render(ReportFixtures.read(ReportFixtures.MATRIX), Format.CSV)
                .lines()
                .toList();

        assertThat(rows).hasSize(5);
        assertThat(rows.getFirst())
                .isEqualTo("source,experiment,run_id,hardware,backend,cell,ctk,np,max_ok_target,min_failed_target,"
                        + "cause,ttft_ms_at_max,launches,predicted_target,predicted_bound,measured_minus_predicted,"
                        + "stopped_because");
        assertThat(rows.subList(1, 5))
                .anySatisfy(r -> assertThat(r)
                        .contains(",llama,\"llama[ctk=q8_0,np=2]\",q8_0,2,2047,2048,request_rejected,")
                        .endsWith(",2,2047,engine_slots,0,"));
    }

    @Test
    void twoRunsAreComparedCellByCellWhateverOrderTheirFilesGiveTheParametersIn() throws Exception {
        // The same matrix written np first: its cells have other names and other key orders, the same values.
        String json = Files.readString(ReportFixtures.MATRIX)
                .replaceAll("llama\\[ctk=([a-z0-9_]+),np=([0-9])]", "llama[np=$2,ctk=$1]")
                .replaceAll(
                        "\"ctk\"\\s*:\\s*\"([a-z0-9_]+)\",\\s*\"np\"\\s*:\\s*\"([0-9])\"",
                        "\"np\" : \"$2\", \"ctk\" : \"$1\"")
                .replace("\"run_id\" : \"", "\"run_id\" : \"other-");
        Path other = Files.writeString(dir.resolve("other.json"), json);
        List<ReportInput> inputs = ReportFixtures.read(ReportFixtures.MATRIX, other);
        assertThat(inputs.get(1).document().scenarios().getFirst().backend()).startsWith("llama[np=");
        assertThat(List.copyOf(
                        inputs.get(1).document().scenarios().getFirst().params().keySet()))
                .containsExactly("np", "ctk");

        String text = Reports.render(inputs, Format.TEXT, true);

        String compared = text.substring(text.indexOf("matrix cells compared by their parameters"));
        assertThat(compared.lines().skip(2).limit(4))
                .hasSize(4)
                .allSatisfy(row -> assertThat(row.split("predicted exact", -1)).hasSize(3));
        assertThat(compared).contains("llama[ctk=q8_0,np=2]");
        // Narrow (the default), each cell's parts stand one under the other and every line fits 120 columns.
        String narrow = Reports.render(inputs, Format.TEXT);
        assertThat(narrow.lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(120));
        assertThat(narrow.substring(narrow.indexOf("matrix cells compared by their parameters")))
                .containsPattern("\nllama\\[ctk=f16,np=1] +4,095 +4,095\n +request_rejected +request_rejected\n");
    }
}
