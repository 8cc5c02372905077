package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 25: a probe of the capacity map is named by its target and its requests at once wherever a step is named,
 * and the CSV gains its {@code concurrency} column only where some step sent more than one prompt.
 */
class ConcurrencyNamedTest {

    private static ReportInput withLevel() {
        ReportInput sample = ReportFixtures.sample();
        String backend = sample.document().scenarios().getFirst().backend();
        Scenario level = Scenario.builder(new Point(backend, null, 4_096, 2), 5_120, "vllm serve")
                .outcome(
                        Outcome.failed(FailureClass.NOT_CONCURRENT),
                        "not_concurrent: queued",
                        new Scenario.Failure("measure", "not_concurrent", "queued", List.of(), null, null))
                .build();
        ResultDocument doc = sample.document().withScenario(level);
        return new ReportInput(sample.source(), doc);
    }

    @Test
    void textAndMarkdownStepTablesNameTheRequestsAtOnce() {
        String text = Reports.render(List.of(withLevel()), Format.TEXT);
        String md = Reports.render(List.of(withLevel()), Format.MD);

        assertThat(text).contains("4,096 x2");
        assertThat(md).contains("| 4,096 x2 |");
    }

    @Test
    void singlePromptTablesAreAsBefore() {
        String text = Reports.render(List.of(ReportFixtures.sample()), Format.TEXT);

        assertThat(text).doesNotContain(" x1").doesNotContain(" x2");
    }

    @Test
    void theCsvHasAConcurrencyColumnOnlyWithAProbeOfTheMap() {
        String single = Reports.render(List.of(ReportFixtures.sample()), Format.CSV);
        String mapped = Reports.render(List.of(withLevel()), Format.CSV);

        assertThat(single.lines().findFirst().orElseThrow()).doesNotContain("concurrency");
        List<String> header = List.of(mapped.lines().findFirst().orElseThrow().split(","));
        int at = header.indexOf("concurrency");
        assertThat(at).isEqualTo(header.indexOf("target_len") + 1);
        assertThat(header).hasSize(single.lines().findFirst().orElseThrow().split(",").length + 1);
        List<String> rows = mapped.lines().skip(1).toList();
        assertThat(rows.getLast()).contains(",4096,2,5120,");
        assertThat(rows.getFirst()).contains(",1,");
    }
}
