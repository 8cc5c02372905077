package dev.ctxprobe.bench;

import dev.ctxprobe.cli.Main;
import java.awt.Rectangle;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.dataformat.yaml.YAMLFactory;

/**
 * The least that a run's chosen libraries take, with none of ctxprobe's own work: picocli modelling ctxprobe's
 * command line ({@code --version}), a small experiment read and a results document written with Jackson's streaming
 * API (no databind), one chart drawn as SVG by JFreeChart ({@code chart}), and a 128k-token prompt's body. The memory
 * benchmark runs it with the script's flags beside {@code ./ctxprobe run}, so that a bar below it shows as such.
 */
final class LibraryFloor {
    private static final String EXPERIMENT = """
            experiment: floor
            model: m
            sweep: {strategy: list, targets: [1024, 2048]}
            backends:
              - name: a
                engine: vllm
                command: vllm serve {model} --max-model-len {max_model_len}
            """;

    private LibraryFloor() {}

    /** Args: {@code TOKENS [chart]}; prints what it made, so that none of it is optimised away. */
    public static void main(String[] args) throws Exception {
        long tokens = Long.parseLong(args[0]);
        boolean chart = List.of(args).contains("chart");
        Main.execute("--version");
        int yamlTokens = 0;
        try (JsonParser p = new YAMLFactory().createParser(ObjectReadContext.empty(), EXPERIMENT)) {
            while (p.nextToken() != null) {
                yamlTokens++;
            }
        }
        StringWriter json = new StringWriter();
        try (JsonGenerator g = new JsonFactory().createGenerator(ObjectWriteContext.empty(), json)) {
            g.writeStartObject();
            for (int i = 0; i < 200; i++) {
                g.writeNumberProperty("metric_" + i, i * 1.5);
            }
            g.writeEndObject();
        }
        int svg = 0;
        if (chart) {
            XYSeries ttft = new XYSeries("ttft");
            for (int i = 1; i <= 16; i++) {
                ttft.add(i * 4096, i * 3.5);
            }
            JFreeChart c = ChartFactory.createXYLineChart(
                    "Time to first token vs context length",
                    "context length (tokens)",
                    "TTFT (ms)",
                    new XYSeriesCollection(ttft));
            SVGGraphics2D g = new SVGGraphics2D(960, 460);
            c.draw(g, new Rectangle(0, 0, 960, 460));
            svg = g.getSVGElement().length();
        }
        StringBuilder prompt = new StringBuilder();
        for (long i = 0; i < tokens; i++) {
            prompt.append(" tok");
        }
        byte[] body = ("{\"prompt\":\"" + prompt + "\"}").getBytes(StandardCharsets.UTF_8);
        System.out.println("floor: yaml tokens " + yamlTokens + ", json "
                + json.toString().length() + " chars, svg " + svg + " chars, body " + body.length + " bytes");
    }
}
