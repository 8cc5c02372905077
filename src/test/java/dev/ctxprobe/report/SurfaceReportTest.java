package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Frontier;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.xy.XYDataset;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 25: the capacity map in the reports, from the capacity-run fixture (the test engine as vLLM-like with a KV pool
 * of 8,192 tokens and SGLang-like with 6,144, output 16, align 256, at 1, 2 and 4 requests at once). Every level above
 * 1 is the pool's arithmetic, so the table's targets are known; its TTFTs are read from the file's own steps.
 */
class SurfaceReportTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Map<String, Long> POOL = Map.of("vllm", 8_192L, "sglang", 6_144L);

    /** The largest aligned target whose {@code n} prompts and outputs fit in the pool together. */
    private static long held(String backend, int n) {
        return (POOL.get(backend) / n - 16) / 256 * 256;
    }

    private static List<ReportInput> capacity() {
        return ReportFixtures.read(ReportFixtures.CAPACITY);
    }

    private static List<List<String>> rows() {
        List<ReportInput> inputs = capacity();
        Labels labels = Labels.of(inputs);
        return SurfaceTable.rows(Answer.of(inputs, labels), labels);
    }

    /** The mean TTFT of the file's step at (backend, target, n), as the table writes it, read from the JSON. */
    private static String ttftOfStep(String backend, long target, int n) throws IOException {
        JsonNode doc = JSON.readTree(ReportFixtures.CAPACITY.toFile());
        for (JsonNode s : doc.get("scenarios")) {
            if (s.get("backend").asString().equals(backend)
                    && s.get("target_len").asLong() == target
                    && s.get("concurrency").asInt() == n
                    && s.get("success").asBoolean()) {
                return Cells.duration(
                        s.get("metrics").get("ttft_ms").get("mean").asDouble());
            }
        }
        throw new AssertionError("no step " + backend + " " + target + " x" + n);
    }

    @Test
    void eachBackendHasARowPerConcurrencyWithItsLevelsNumbers() throws IOException {
        List<List<String>> rows = rows();

        assertThat(rows)
                .extracting(r -> r.get(0) + " x" + r.get(1))
                .containsExactly("vllm x1", "vllm x2", "vllm x4", "sglang x1", "sglang x2", "sglang x4");
        // N = 1 is the single-prompt answer: the engine's refusal above it, all launches of its search.
        assertThat(rows.get(0).subList(2, 5)).containsExactly("7,936", "8,192", "3");
        assertThat(rows.get(0).getLast()).isEqualTo("kv_insufficient");
        assertThat(rows.get(3).subList(2, 5)).containsExactly("5,888", "6,144", "3");
        assertThat(rows.get(3).getLast()).isEqualTo("request_rejected");
        for (List<String> row : rows) {
            String backend = row.get(0);
            int n = Integer.parseInt(row.get(1));
            if (n == 1) {
                continue;
            }
            long ok = held(backend, n);
            assertThat(row.get(2)).as(row.toString()).isEqualTo(Cells.tokens(ok));
            assertThat(row.get(3)).as(row.toString()).isEqualTo(Cells.tokens(ok + 256));
            // The first level above 1 launches the kept server; the next reuses it.
            assertThat(row.get(4)).as(row.toString()).isEqualTo(n == 2 ? "1" : "0");
            assertThat(row.get(5)).as(row.toString()).isEqualTo(ttftOfStep(backend, ok, n));
            assertThat(row.get(6)).as(row.toString()).matches("\\d+ ms - \\d+ ms");
            assertThat(row.getLast()).as(row.toString()).startsWith("not_concurrent (queued (");
        }
    }

    /**
     * A file still being written has no frontier section: its single prompts give N = 1, not the map's steps at
     * shorter targets, nor their launches.
     */
    @Test
    void aRunStillGoingTakesNEqualsOneFromItsSinglePrompts() {
        var doc = capacity().getFirst().document();
        List<ReportInput> inputs = List.of(new ReportInput(
                "running.json",
                new dev.ctxprobe.results.ResultDocument(doc.metadata(), doc.config(), doc.scenarios(), Map.of())));
        Labels labels = Labels.of(inputs);

        List<List<String>> rows = SurfaceTable.rows(Answer.of(inputs, labels), labels);

        assertThat(rows).extracting(r -> r.get(0) + " x" + r.get(1)).containsExactly("vllm x1", "sglang x1");
        // Three single prompts were launched; the map's four steps are not the single-prompt search's.
        assertThat(rows.getFirst().subList(2, 5)).containsExactly("7,936", "8,192", "3");
        assertThat(rows.getFirst().getLast()).isEqualTo("kv_insufficient");
    }

    @Test
    void markdownHasTheMapTableWithItsRows() {
        String md = Reports.render(capacity(), Format.MD);

        assertThat(md)
                .contains("### Capacity map: the longest prompt held at once by N requests\n\n"
                        + "| backend | N | largest held at once | smallest not | launches | TTFT at largest (mean) |");
        assertThat(md)
                .contains("\n| vllm | 2 | " + Cells.tokens(held("vllm", 2)) + " | "
                        + Cells.tokens(held("vllm", 2) + 256) + " | 1 | ");
        assertThat(md)
                .contains("\n| sglang | 4 | " + Cells.tokens(held("sglang", 4)) + " | "
                        + Cells.tokens(held("sglang", 4) + 256) + " | 0 | ");
        assertThat(md).contains("\n| vllm | 1 | 7,936 | 8,192 | 3 | ");
    }

    @Test
    void htmlHasTheMapTableAndItsChart() {
        String html = Reports.render(capacity(), Format.HTML);

        assertThat(html).contains("<h3>Capacity map: the longest prompt held at once by N requests</h3>");
        assertThat(html)
                .contains("<tr><td class=\"label\">sglang</td><td class=\"num\">2</td><td class=\"num\">"
                        + Cells.tokens(held("sglang", 2)) + "</td><td class=\"num\">"
                        + Cells.tokens(held("sglang", 2) + 256) + "</td><td class=\"num\">1</td>");
        assertThat(html).contains("<svg id='chart-capacity'");
        assertThat(html.indexOf("<svg id='chart-capacity'")).isLessThan(html.indexOf("<svg id='chart-ttft'"));
    }

    @Test
    void theTextTableFits120Columns() {
        String text = Reports.render(capacity(), Format.TEXT);

        assertThat(text).contains("\ncapacity map: the longest prompt held at once by N requests\n");
        assertThat(text)
                .containsPattern("\\nvllm +4 +" + Cells.tokens(held("vllm", 4)) + " +"
                        + Cells.tokens(held("vllm", 4) + 256) + " +0 ");
        assertThat(text.lines()).allSatisfy(l -> assertThat(l.length()).as(l).isLessThanOrEqualTo(120));
    }

    @Test
    void aRunOfSinglePromptsHasNoMapInAnyFormat() {
        List<ReportInput> sample = List.of(ReportFixtures.sample());

        for (Format f : List.of(Format.TEXT, Format.MD, Format.HTML)) {
            assertThat(Reports.render(sample, f)).as(f.toString()).doesNotContainIgnoringCase("capacity map");
        }
        assertThat(Charts.of(sample, Labels.of(sample)))
                .extracting(Charts.Chart::name)
                .containsExactly("ttft", "prefill");
        assertThat(subtitles(Charts.of(sample, Labels.of(sample)).getFirst().chart()))
                .doesNotContain(Charts.SINGLE_PROMPTS_ONLY);
    }

    @Test
    void theCapacityChartDrawsTheMeasuredStaircaseAndTheEnginesStatement() {
        List<ReportInput> inputs = capacity();
        List<Charts.Chart> charts = Charts.of(inputs, Labels.of(inputs));

        assertThat(charts).extracting(Charts.Chart::name).containsExactly("capacity", "ttft", "prefill");
        Map<String, Map<Double, Double>> series = series(charts.getFirst().chart());
        for (String b : List.of("vllm", "sglang")) {
            Frontier f = inputs.getFirst().frontier(b);
            assertThat(series.get(b + ": largest held at once"))
                    .as(b)
                    .containsExactly(
                            Map.entry(1.0, (double) f.maxOkTarget()),
                            Map.entry(2.0, (double) held(b, 2)),
                            Map.entry(4.0, (double) held(b, 4)));
            assertThat(series.get(b + ": smallest not held"))
                    .as(b)
                    .containsExactly(
                            Map.entry(1.0, (double) f.minFailedTarget()),
                            Map.entry(2.0, (double) held(b, 2) + 256),
                            Map.entry(4.0, (double) held(b, 4) + 256));
            // The servers stated their pool: N = 1 is the limit they named, above it pool / N - output.
            assertThat(series.get(b + ": the engine's statement"))
                    .as(b)
                    .containsExactly(
                            Map.entry(1.0, (double) f.predictedMax()),
                            Map.entry(2.0, (double) (POOL.get(b) / 2 - 16)),
                            Map.entry(4.0, (double) (POOL.get(b) / 4 - 16)));
        }
        // The file has no plan prediction: no line is drawn for one.
        assertThat(series.keySet()).noneMatch(name -> name.contains("predicted"));
        String svg = Charts.svg(charts.getFirst());
        assertThat(svg)
                .startsWith("<svg id='chart-capacity'")
                .contains(">vllm: largest held at once<", ">sglang: smallest not held<");
        assertThat(Charts.svg(Charts.of(inputs, Labels.of(inputs)).getFirst()))
                .as("reproducible")
                .isEqualTo(svg);
    }

    @Test
    void aPlanPredictionIsDrawnBesideTheMeasuredMap() {
        ReportInput input = capacity().getFirst();
        Frontier f = input.frontier("vllm");
        BackendPrediction p = new BackendPrediction(
                "vllm", "vllm", 7_680L, Bound.KV_MEMORY, "fits", 7_700L, 256, 256, null, null, null, null, null);
        List<ReportInput> inputs =
                List.of(new ReportInput(input.source(), input.document().withFrontier("vllm", f.withPredicted(p))));

        Map<String, Map<Double, Double>> series =
                series(Charts.of(inputs, Labels.of(inputs)).getFirst().chart());

        assertThat(series.get("vllm: predicted (ctxprobe plan)")).containsExactly(Map.entry(1.0, 7_680.0));
        assertThat(series).doesNotContainKey("sglang: predicted (ctxprobe plan)");
    }

    /** A run of single prompts compared with a capacity run: the map's rows and lines are the capacity run's alone. */
    @Test
    void comparedWithARunOfSinglePromptsEachBackendKeepsItsColour() {
        List<ReportInput> inputs = ReportFixtures.read(ReportFixtures.SAMPLE, ReportFixtures.CAPACITY);
        Labels labels = Labels.of(inputs);
        List<Charts.Chart> charts = Charts.of(inputs, labels);

        assertThat(SurfaceTable.rows(Answer.of(inputs, labels), labels))
                .hasSize(6)
                .allMatch(r -> r.getFirst().equals(labels.of(inputs.get(1))));
        JFreeChart capacity = charts.getFirst().chart();
        JFreeChart ttft = charts.get(1).chart();
        for (String backend : List.of("vllm", "sglang")) {
            String label = labels.of(inputs.get(1), backend);
            assertThat(paint(capacity, label + ": largest held at once"))
                    .as(label)
                    .isEqualTo(paint(ttft, label));
        }
        assertThat(series(capacity).keySet()).noneMatch(k -> k.startsWith(labels.of(inputs.get(0))));
    }

    /** The colour the chart draws the named series in. */
    private static java.awt.Paint paint(JFreeChart chart, String name) {
        var plot = chart.getXYPlot();
        for (int d = 0; d < plot.getDatasetCount(); d++) {
            XYDataset data = plot.getDataset(d);
            for (int s = 0; s < data.getSeriesCount(); s++) {
                if (data.getSeriesKey(s).toString().equals(name)) {
                    return plot.getRenderer(d).getSeriesPaint(s);
                }
            }
        }
        throw new AssertionError("no series " + name);
    }

    @Test
    void theLengthChartsShowSinglePromptsOnlyAndSaySo() {
        List<ReportInput> inputs = capacity();
        Charts.Chart ttft = Charts.of(inputs, Labels.of(inputs)).get(1);

        assertThat(ttft.name()).isEqualTo("ttft");
        // vLLM-like's only single prompt served is its frontier; the map's steps at 3,840 and 1,792 are left out.
        assertThat(series(ttft.chart()).get("vllm")).containsOnlyKeys(7_936.0);
        assertThat(series(ttft.chart()).get("sglang")).containsOnlyKeys(5_888.0);
        assertThat(subtitles(ttft.chart())).contains(Charts.SINGLE_PROMPTS_ONLY);
        assertThat(Charts.svg(ttft)).contains("Single prompts (N = 1) only");
    }

    /** Every series of every dataset of the chart's plot, by name: x to y. */
    private static Map<String, Map<Double, Double>> series(JFreeChart chart) {
        Map<String, Map<Double, Double>> out = new TreeMap<>();
        var plot = chart.getXYPlot();
        for (int d = 0; d < plot.getDatasetCount(); d++) {
            XYDataset data = plot.getDataset(d);
            for (int s = 0; s < data.getSeriesCount(); s++) {
                Map<Double, Double> points = new TreeMap<>();
                for (int i = 0; i < data.getItemCount(s); i++) {
                    points.put(data.getXValue(s, i), data.getYValue(s, i));
                }
                out.put(data.getSeriesKey(s).toString(), points);
            }
        }
        return out;
    }

    private static List<String> subtitles(JFreeChart chart) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < chart.getSubtitleCount(); i++) {
            if (chart.getSubtitle(i) instanceof TextTitle t) {
                out.add(t.getText());
            }
        }
        return out;
    }
}
