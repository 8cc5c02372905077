package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import java.awt.BasicStroke;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYDataset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartsTest {
    @TempDir
    Path dir;

    @Test
    void svgIsReproducibleAndNamesEverySeries() {
        List<ReportInput> inputs = List.of(ReportFixtures.sample());
        List<Charts.Chart> charts = Charts.of(inputs, Labels.of(inputs));

        assertThat(charts).extracting(Charts.Chart::name).containsExactly("ttft", "prefill");
        for (Charts.Chart chart : charts) {
            String svg = Charts.svg(chart);
            assertThat(Charts.svg(Charts.of(inputs, Labels.of(inputs)).get(charts.indexOf(chart))))
                    .isEqualTo(svg);
            assertThat(svg).startsWith("<svg id='chart-" + chart.name() + "'");
            assertThat(svg).contains("clipPath id='" + chart.name() + "-clip-");
            assertThat(svg).contains(">vllm<", ">sglang<", ">vllm: failed<", ">sglang: failed<");
        }
    }

    @Test
    void logAxisTicksAndTheRotatedAxisLabelAreSvgText() {
        List<ReportInput> inputs = List.of(ReportFixtures.sample());
        Charts.Chart ttft = Charts.of(inputs, Labels.of(inputs)).getFirst();

        assertThat(ttft.chart().getXYPlot().getDomainAxis()).isInstanceOf(Charts.PlainLabelLogAxis.class);
        // Drawn through TextLayout they were glyph outlines (paths), and the run loaded HarfBuzz's FFM stubs for them.
        assertThat(Charts.svg(ttft)).contains(">4K<", ">8K<", ">16K<", ">TTFT (ms, mean)<");
    }

    @Test
    void thePrefillChartPlotsTheTargetOverTheMeanTtft() {
        List<ReportInput> seeds =
                ReportFixtures.read(ReportFixtures.SEEDS.resolve("dsv4_p800_max_context_length.json"));
        XYPlot plot = Charts.of(seeds, Labels.of(seeds)).get(1).chart().getXYPlot();
        XYDataset data = plot.getDataset();

        int at64k = -1;
        for (int i = 0; i < data.getItemCount(0); i++) {
            if (data.getXValue(0, i) == 65_536) {
                at64k = i;
            }
        }
        // 65,536 tokens in a mean TTFT of 390.7 ms; the seed's input_token_throughput says 18,557.
        assertThat(data.getYValue(0, at64k)).isBetween(167_737.0, 167_738.0);
        assertThat(plot.getRangeAxis().getLabel()).isEqualTo("tokens/s (target / mean TTFT)");
    }

    @Test
    void theTtftChartDrawsEachBackendsPrefillFloorAsADashedLine() {
        List<ReportInput> seeds =
                ReportFixtures.read(ReportFixtures.SEEDS.resolve("dsv4_h200_max_context_length.json"));
        Charts.Chart ttft = Charts.of(seeds, Labels.of(seeds)).getFirst();
        XYPlot plot = ttft.chart().getXYPlot();
        XYDataset data = plot.getDataset();

        int floors = 0;
        for (int series = 0; series < data.getSeriesCount(); series++) {
            String key = data.getSeriesKey(series).toString();
            if (!key.endsWith(": prefill floor")) {
                continue;
            }
            floors++;
            assertThat(((BasicStroke) plot.getRenderer().getSeriesStroke(series)).getDashArray())
                    .as("the floor of %s is dashed", key)
                    .isNotNull();
            if (key.startsWith("sglang")) {
                int measured = indexOf(data, key.substring(0, key.length() - ": prefill floor".length()));
                // SGLang's 917,504 tokens: a TTFT of 3.150 s under a floor of 4.461 s (FP8, indexer counted),
                // 141.7% of roofline (docs/results.md): the line runs above the point.
                assertThat(yAt(data, series, 917_504) / yAt(data, measured, 917_504))
                        .isCloseTo(4.461 / 3.150, offset(0.002));
            }
        }
        assertThat(floors).as("one floor line per backend").isEqualTo(2);
        assertThat(Charts.svg(ttft)).contains(">sglang: prefill floor<", ">vllm: prefill floor<");
    }

    private static int indexOf(XYDataset data, String key) {
        for (int series = 0; series < data.getSeriesCount(); series++) {
            if (data.getSeriesKey(series).toString().equals(key)) {
                return series;
            }
        }
        throw new AssertionError("no series " + key);
    }

    private static double yAt(XYDataset data, int series, long x) {
        for (int i = 0; i < data.getItemCount(series); i++) {
            if (data.getXValue(series, i) == x) {
                return data.getYValue(series, i);
            }
        }
        throw new AssertionError("no point at " + x + " in " + data.getSeriesKey(series));
    }

    @Test
    void failuresOfSeveralSeriesAtOneLengthStandSideBySide() throws Exception {
        List<ReportInput> seeds = ReportFixtures.read(
                ReportFixtures.seedFiles(ReportFixtures.SEEDS).toArray(Path[]::new));
        XYPlot plot = Charts.of(seeds, Labels.of(seeds)).getFirst().chart().getXYPlot();
        Charts.FailureRenderer renderer = (Charts.FailureRenderer) plot.getRenderer();
        XYDataset data = plot.getDataset();

        List<Double> centresAt1m = new ArrayList<>();
        List<Double> centresAt256k = new ArrayList<>();
        for (int series = 0; series < data.getSeriesCount(); series++) {
            if (!data.getSeriesKey(series).toString().endsWith(": failed")) {
                continue;
            }
            for (int item = 0; item < data.getItemCount(series); item++) {
                double centre =
                        renderer.getItemShape(series, item).getBounds2D().getCenterX();
                if (data.getXValue(series, item) == 1_048_576) {
                    centresAt1m.add(centre);
                } else if (data.getXValue(series, item) == 262_144) {
                    centresAt256k.add(centre);
                }
            }
        }
        // Both H200 backends fail at 1M: their Xs sit either side of it, a cross's width and a gap apart.
        assertThat(centresAt1m).containsExactlyInAnyOrder(-8.0, 8.0);
        // The P800's failure at 256K is alone there and stays on its length.
        assertThat(centresAt256k).containsExactly(0.0);
    }

    @Test
    void comparingInputsLabelsSeriesWithTheHardwareAndTheRun() throws Exception {
        String runId = ReportFixtures.sample().document().metadata().runId();
        Path rerun = dir.resolve("rerun.json");
        Files.writeString(rerun, Files.readString(ReportFixtures.SAMPLE).replace(runId, "20260712-101010"));
        List<ReportInput> inputs = ReportFixtures.read(ReportFixtures.SAMPLE, rerun);

        String svg = Charts.svg(Charts.of(inputs, Labels.of(inputs)).getFirst());

        assertThat(svg)
                .contains(">test engine on CPU (" + runId + ") / vllm<")
                .contains(">test engine on CPU (20260712-101010) / sglang: failed<");
    }

    @Test
    void theSameRunTwiceStillGetsTwoSeries() {
        List<ReportInput> inputs = ReportFixtures.read(ReportFixtures.SAMPLE, ReportFixtures.SAMPLE);

        String svg = Charts.svg(Charts.of(inputs, Labels.of(inputs)).getFirst());

        assertThat(svg).contains(">test engine on CPU (input 1) / vllm<", ">test engine on CPU (input 2) / vllm<");
    }

    @Test
    void pngFilesAreWritten() throws Exception {
        List<ReportInput> inputs = List.of(ReportFixtures.sample());

        List<Path> files = Reports.writePngs(inputs, dir.resolve("png"));

        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("ttft.png", "prefill.png");
        for (Path file : files) {
            BufferedImage image = ImageIO.read(file.toFile());
            assertThat(image.getWidth()).isEqualTo(Charts.WIDTH);
            assertThat(image.getHeight()).isEqualTo(Charts.HEIGHT);
        }
    }
}
