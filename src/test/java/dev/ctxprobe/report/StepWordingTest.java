package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a step's columns mean (docs/results.md#reading-results): the context the server had, not target + pad;
 * statistics without samples left empty, not 0; the server's stated limit not called "predicted".
 */
class StepWordingTest {
    /** The sample's first step as if its server had a fixed context of 8,192 (a {@code -c 8192}, a kept server). */
    private static List<ReportInput> withFixedContext() {
        ResultDocument doc = ReportFixtures.sample().document();
        Scenario first = doc.scenarios().getFirst();
        assertThat(first.maxModelLen()).isEqualTo(4_352);
        ServedCapacity stated =
                new ServedCapacity(8_192L, 8_191L, null, 1, true, null, null, null, null, null, List.of("GET /props"));
        Scenario fixed = first.toBuilder()
                .server(first.server().withCapacity(stated), first.log())
                .build();
        return List.of(new ReportInput("results.json", doc.withScenarioAt(0, fixed)));
    }

    @Test
    void theContextColumnShowsWhatTheServerStatedItHad() {
        List<ReportInput> inputs = withFixedContext();

        assertThat(StepFacts.context(inputs.getFirst().document().scenarios().getFirst()))
                .isEqualTo(8_192L);
        assertThat(Reports.render(inputs, Format.TEXT).lines().filter(l -> l.startsWith("vllm      4,096")))
                .singleElement()
                .satisfies(l -> assertThat(l).contains(" 8,192 ").doesNotContain("4,352"));
        assertThat(Reports.render(inputs, Format.HTML))
                .contains("<th>context<br><span class=\"unit\">the server's</span></th>")
                .contains("<td class=\"num\">8,192</td>");
        // A step whose server stated nothing keeps the max_model_len its command was given.
        assertThat(StepFacts.context(
                        ReportFixtures.sample().document().scenarios().get(1)))
                .isEqualTo(ReportFixtures.sample().document().scenarios().get(1).maxModelLen());
    }

    @Test
    void anEndpointCtxprobeDidNotLaunchAndThatStatedNothingHasNoContext() {
        Scenario launched = ReportFixtures.sample().document().scenarios().get(1);
        Scenario endpoint = Scenario.builder(launched.point(), launched.maxModelLen(), "")
                .server(null, null)
                .build();

        assertThat(StepFacts.context(endpoint)).isNull();
    }

    @Test
    void csvLeavesTpotAndItlEmptyWhereThereAreNoSamples() {
        List<String> csv = Reports.render(List.of(ReportFixtures.sample()), Format.CSV)
                .lines()
                .toList();
        List<String> header = fields(csv.getFirst());
        String[] ok = csv.stream()
                .skip(1)
                .map(StepWordingTest::fields)
                .filter(r -> r.get(header.indexOf("outcome")).equals("ok"))
                .findFirst()
                .orElseThrow()
                .toArray(String[]::new);

        // output_len 1: no time per output token, no gap between tokens; the count says so.
        assertThat(ok[header.indexOf("tpot_ms_count")]).isEqualTo("0");
        assertThat(ok[header.indexOf("itl_ms_count")]).isEqualTo("0");
        for (String stat : List.of("mean", "p50", "p90", "p95", "p99")) {
            assertThat(ok[header.indexOf("tpot_ms_" + stat)])
                    .as("tpot_ms_" + stat)
                    .isEmpty();
            assertThat(ok[header.indexOf("itl_ms_" + stat)])
                    .as("itl_ms_" + stat)
                    .isEmpty();
        }
        assertThat(ok[header.indexOf("ttft_ms_mean")]).isNotEmpty();
    }

    /** One CSV record's fields (RFC 4180: a quoted field may hold commas and doubled quotes). */
    private static List<String> fields(String line) {
        List<String> out = new java.util.ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted && c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                f.append('"');
                i++;
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                out.add(f.toString());
                f.setLength(0);
            } else {
                f.append(c);
            }
        }
        out.add(f.toString());
        return out;
    }

    @Test
    void theServersStatedLimitIsNotCalledPredicted() {
        String text = Reports.render(List.of(ReportFixtures.sample()), Format.TEXT);
        String html = Reports.render(List.of(ReportFixtures.sample()), Format.HTML);

        assertThat(text).contains("server stated max").doesNotContain("predicted max");
        assertThat(html)
                .contains("the server stated max 12,256 (its own limit, not the plan&#39;s)")
                .doesNotContain("predicted max");
    }
}
