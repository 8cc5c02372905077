package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartsTest {
    @TempDir
    Path dir;

    @Test
    void svgIsReproducibleAndNamesEverySeries() {
        List<ResultSet> sets = List.of(new ResultReader().readFile(ReportFixtures.SAMPLE));
        List<Charts.Chart> charts = Charts.of(sets, Labels.of(sets));

        assertThat(charts).extracting(Charts.Chart::name).containsExactly("ttft", "throughput");
        for (Charts.Chart chart : charts) {
            String svg = Charts.svg(chart);
            assertThat(Charts.svg(Charts.of(sets, Labels.of(sets)).get(charts.indexOf(chart))))
                    .isEqualTo(svg);
            assertThat(svg).startsWith("<svg id='chart-" + chart.name() + "'");
            assertThat(svg).contains("clipPath id='" + chart.name() + "-clip-");
            assertThat(svg).contains(">vllm<", ">sglang<", ">vllm: failed<", ">sglang: failed<");
        }
    }

    @Test
    void comparingInputsLabelsSeriesWithTheHardwareAndTheRun() throws Exception {
        Path rerun = dir.resolve("rerun.json");
        Files.writeString(rerun, Files.readString(ReportFixtures.SAMPLE).replace("20260711-090512", "20260712-101010"));
        ResultReader reader = new ResultReader();
        List<ResultSet> sets = List.of(reader.readFile(ReportFixtures.SAMPLE), reader.readFile(rerun));

        String svg = Charts.svg(Charts.of(sets, Labels.of(sets)).getFirst());

        assertThat(svg)
                .contains(">1x NVIDIA L4 24GB (20260711-090512) / vllm<")
                .contains(">1x NVIDIA L4 24GB (20260712-101010) / sglang: failed<");
    }

    @Test
    void theSameRunTwiceStillGetsTwoSeries() {
        List<ResultSet> sets = List.of(
                new ResultReader().readFile(ReportFixtures.SAMPLE), new ResultReader().readFile(ReportFixtures.SAMPLE));

        String svg = Charts.svg(Charts.of(sets, Labels.of(sets)).getFirst());

        assertThat(svg).contains(">1x NVIDIA L4 24GB (input 1) / vllm<", ">1x NVIDIA L4 24GB (input 2) / vllm<");
    }

    @Test
    void pngFilesAreWritten() throws Exception {
        List<ResultSet> sets = List.of(new ResultReader().readFile(ReportFixtures.SAMPLE));

        List<Path> files = Reports.writePngs(sets, dir.resolve("png"));

        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("ttft.png", "throughput.png");
        for (Path file : files) {
            BufferedImage image = ImageIO.read(file.toFile());
            assertThat(image.getWidth()).isEqualTo(Charts.WIDTH);
            assertThat(image.getHeight()).isEqualTo(Charts.HEIGHT);
        }
    }
}
