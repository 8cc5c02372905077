package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Input;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.ResultFiles;
import dev.ctxprobe.results.Source;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every format shows what {@code ctxprobe plan} predicted beside what was measured, read back from a results file
 * that records {@code frontier.<backend>.predicted}: the sample run with predictions written into it, one exact and
 * one 256 tokens too high.
 */
class PredictedReportTest {
    @TempDir
    static Path dir;

    private static List<ReportInput> inputs;

    private static BackendPrediction prediction(String backend, long target, Bound bound) {
        return new BackendPrediction(
                backend,
                backend,
                target,
                bound,
                Cells.tokens(target) + " tokens, set by " + bound.label(),
                target + 100,
                256,
                256,
                null,
                List.of("at target " + Cells.tokens(target) + ": fits"),
                List.of(new Input("memory per device", "16.00 GiB", Source.EXPERIMENT, "hardware.memory_gib")),
                List.of(new Missing("weights", "give 'weights_gib: N' in the experiment")),
                List.of());
    }

    @BeforeAll
    static void writeAndReadBack() throws Exception {
        ResultDocument doc = ReportFixtures.sample().document();
        doc = doc.withFrontier(
                "vllm", doc.frontier().get("vllm").withPredicted(prediction("vllm", 12_032, Bound.KV_MEMORY)));
        doc = doc.withFrontier(
                "sglang",
                doc.frontier().get("sglang").withPredicted(prediction("sglang", 14_080, Bound.ENGINE_RESERVE)));
        Path file = dir.resolve("results.json");
        ResultFiles.write(file, doc);
        inputs = ReportFixtures.read(file);
    }

    @Test
    void thePredictionSurvivesTheResultsFile() {
        BackendPrediction read = inputs.getFirst().frontier("vllm").predicted();

        assertThat(read).isEqualTo(prediction("vllm", 12_032, Bound.KV_MEMORY));
    }

    @Test
    void textLeadsWithItInTheLineAndAddsATable() {
        String text = Reports.render(inputs, Format.TEXT);

        assertThat(text)
                .contains("predicted 12,032 (KV memory): exact")
                .contains("predicted 14,080 (the engine's own reserve): -256")
                .contains("predicted before the first launch (ctxprobe plan) against measured\n");
        assertThat(text.lines().filter(l -> l.startsWith("sglang ") && l.contains("14,080")))
                .anySatisfy(l -> assertThat(l).contains("13,824").endsWith("-256"));
    }

    @Test
    void markdownHtmlAndCsvShowItToo() {
        assertThat(Reports.render(inputs, Format.MD))
                .contains("### Predicted before the first launch against measured")
                .contains("| vllm | 12,032 | KV memory | 12,032 | exact |");
        assertThat(Reports.render(inputs, Format.HTML))
                .contains("predicted 12,032 (KV memory): exact (ctxprobe plan, before the first launch)");
        String csv = Reports.render(inputs, Format.CSV);
        assertThat(csv.lines().findFirst().orElseThrow()).contains(",predicted_target,predicted_bound,");
        assertThat(csv.lines().filter(l -> l.contains(",vllm,")))
                .isNotEmpty()
                .allSatisfy(l -> assertThat(l).contains(",12032,kv_memory,"));
    }

    @Test
    void aFileWithoutPredictionsShowsNone() {
        List<ReportInput> sample = List.of(ReportFixtures.sample());

        for (Format f : Format.values()) {
            assertThat(Reports.render(sample, f))
                    .doesNotContain("predicted before")
                    .doesNotContain("(ctxprobe plan");
        }
    }
}
