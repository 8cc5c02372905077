package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.Main;
import dev.ctxprobe.testsupport.Required;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders reports in headless Chromium, where it is installed, and checks the pages are drawn: each series'
 * colour appears, so the inline SVG rendered under the page's Content-Security-Policy.
 */
class HtmlScreenshotIT {
    private static final int WIDTH = 1280;

    /** More pixels of a backend's colour than the capacity run's length charts draw without its map's chart. */
    private static final int CAPACITY_PIXELS = 1000;

    @TempDir
    Path dir;

    private Path chromium;

    @BeforeEach
    void findChromium() {
        chromium = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser").stream()
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst()
                .orElse(null);
        Required.assumePresent("chromium", chromium != null, "no /usr/bin/chromium (Debian package chromium)");
    }

    @Test
    void chromiumRendersTheSampleReportWithItsCharts() throws Exception {
        BufferedImage image = screenshot("sample", List.of(ReportFixtures.SAMPLE));

        assertThat(image.getWidth()).isEqualTo(WIDTH);
        assertThat(countPixels(image, 0x1f77b4))
                .as("pixels of the first series' colour")
                .isGreaterThan(200);
        assertThat(countPixels(image, 0xff7f0e))
                .as("pixels of the second series' colour")
                .isGreaterThan(200);
    }

    @Test
    void chromiumRendersTheSeedsComparedWithEverySeries() throws Exception {
        List<Path> seeds = new ArrayList<>(ReportFixtures.seedFiles(ReportFixtures.SEEDS));

        BufferedImage image = screenshot("seeds", seeds);

        for (int colour : new int[] {0x1f77b4, 0xff7f0e, 0x2ca02c}) {
            assertThat(countPixels(image, colour))
                    .as("pixels of series colour %06x", colour)
                    .isGreaterThan(200);
        }
    }

    /**
     * A capacity map (issue 25): the map's chart leads the charts, its staircases drawn in both backends' colours.
     * The length charts of the same page hold one served point per backend (their single prompts), a few dozen
     * pixels of each colour: the thousands counted here are the staircases' lines.
     */
    @Test
    void chromiumRendersTheCapacityMapChart() throws Exception {
        BufferedImage image = screenshot("capacity", List.of(ReportFixtures.CAPACITY));

        for (int colour : new int[] {0x1f77b4, 0xff7f0e}) {
            assertThat(countPixels(image, colour))
                    .as("pixels of series colour %06x", colour)
                    .isGreaterThan(CAPACITY_PIXELS);
        }
    }

    /**
     * The example a user runs for the map, {@code experiments/capacity-demo.yaml} on the embedded engine: its own
     * report, from the run's results.json, draws the map's staircase (one backend, the first series' colour).
     */
    @Test
    void chromiumRendersTheCapacityDemosOwnMap() throws Exception {
        Path out = dir.resolve("out");
        int code = Main.execute("run", "experiments/capacity-demo.yaml", "--out", out.toString(), "--quiet");
        assertThat(code).as("the capacity demo's exit code").isZero();
        Path results;
        try (Stream<Path> runs = Files.list(out.resolve("capacity-demo"))) {
            results = runs.findFirst().orElseThrow().resolve("results.json");
        }
        String html = Reports.renderFiles(List.of(results), Format.HTML);
        assertThat(html).contains("id='chart-capacity'");

        BufferedImage image = screenshot("capacity-demo", List.of(results));
        BufferedImage without = screenshot(
                "capacity-demo-without-map",
                List.of(results),
                page -> page.replaceFirst("(?s)<svg id='chart-capacity'.*?</svg>", ""));
        System.out.printf(
                "capacity demo: %d pixels of the series colour, %d without the map's chart%n",
                countPixels(image, 0x1f77b4), countPixels(without, 0x1f77b4));

        assertThat(countPixels(image, 0x1f77b4) - countPixels(without, 0x1f77b4))
                .as("pixels the map's chart adds (647 measured: one backend's staircase over 1, 2, 4)")
                .isGreaterThan(300);
    }

    /**
     * A matrix run's heat map (the real llama-server, -ctk by -np): the cells of the longest frontier in the darkest
     * shade, hsl(140, 50%, 52%), those of half of it lighter, hsl(140, 50%, 72%); both drawn as areas, not a line.
     */
    @Test
    void chromiumRendersTheMatrixAsAHeatMap() throws Exception {
        BufferedImage image = screenshot("matrix", List.of(ReportFixtures.MATRIX));

        assertThat(countNear(image, 71, 194, 112))
                .as("pixels of the longest frontier's shade")
                .isGreaterThan(2000);
        assertThat(countNear(image, 148, 219, 172))
                .as("pixels of the half-as-long frontier's shade")
                .isGreaterThan(2000);
    }

    /**
     * docs/results.md#reading-results: the seeds read together, two runs compared, and a capacity map's table and
     * chart, fit a 1,280 px window: no
     * table, frontier line or page is wider than the window, so no horizontal scrollbar appears. The page is loaded
     * in a frame of that width by a probe page, which measures every element the report could widen and writes
     * what overflows into its own DOM, read back with --dump-dom.
     */
    @Test
    void theSeedsTwoComparedRunsAndACapacityMapFitA1280PixelWindowWithoutAHorizontalScrollbar() throws Exception {
        List<Path> seeds = new ArrayList<>(ReportFixtures.seedFiles(ReportFixtures.SEEDS));
        for (var c : List.of(
                java.util.Map.entry("seeds", seeds),
                java.util.Map.entry("two-runs", List.of(ReportFixtures.SAMPLE, ReportFixtures.MATRIX)),
                java.util.Map.entry("capacity", List.of(ReportFixtures.CAPACITY)))) {
            List<String> measured = overflow(c.getKey(), c.getValue());

            assertThat(measured)
                    .as(c.getKey() + ": the probe's answer")
                    .first()
                    .asString()
                    .startsWith("page ");
            assertThat(measured.getFirst())
                    .as(c.getKey() + ": the page's scroll width against the window's")
                    .matches("page (\\d+)/\\1");
            assertThat(measured.subList(1, measured.size()))
                    .as(c.getKey() + ": elements wider than the window or than their box")
                    .isEmpty();
        }
    }

    private List<String> overflow(String name, List<Path> inputs) throws Exception {
        Reports.writeAtomically(dir.resolve(name + ".html"), Reports.renderFiles(inputs, Format.HTML));
        Path probe = Files.writeString(dir.resolve(name + "-probe.html"), """
                <!doctype html><html><body style="margin:0">
                <iframe id="f" src="%s.html" style="width:%dpx;height:2400px;border:0"></iframe>
                <script>
                document.getElementById('f').onload = function () {
                  var d = this.contentDocument, w = d.documentElement.clientWidth;
                  var out = ['page ' + d.documentElement.scrollWidth + '/' + w];
                  d.querySelectorAll('.scroll, table, pre').forEach(function (e) {
                    var right = Math.round(e.getBoundingClientRect().right);
                    if (e.scrollWidth > e.clientWidth + 1 || right > w) {
                      out.push(e.tagName + '.' + e.className + ' ' + e.scrollWidth + ' > ' + e.clientWidth
                          + ', right edge ' + right + ' of ' + w);
                    }
                  });
                  var p = document.createElement('pre');
                  p.id = 'overflow';
                  p.textContent = out.join('\\n');
                  document.body.appendChild(p);
                };
                </script></body></html>
                """.formatted(name, WIDTH));
        Path dom = dir.resolve(name + ".dom");
        Process process = new ProcessBuilder(
                        chromium.toString(),
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--no-first-run",
                        // The probe reads the report's DOM: both are files, which Chromium keeps apart otherwise.
                        "--allow-file-access-from-files",
                        "--virtual-time-budget=5000",
                        "--user-data-dir=" + dir.resolve("profile-" + name),
                        "--window-size=" + (WIDTH + 40) + ",2400",
                        "--dump-dom",
                        probe.toUri().toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectOutput(dom.toFile())
                .start();
        try {
            assertThat(process.waitFor(90, TimeUnit.SECONDS))
                    .as("chromium finished")
                    .isTrue();
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        String html = Files.readString(dom);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<pre id=\"overflow\">([^<]*)</pre>")
                .matcher(html);
        assertThat(m.find()).as("the probe's answer in the DOM:\n%s", html).isTrue();
        return List.of(m.group(1).replace("&gt;", ">").split("\n"));
    }

    private BufferedImage screenshot(String name, List<Path> inputs) throws Exception {
        return screenshot(name, inputs, page -> page);
    }

    private BufferedImage screenshot(String name, List<Path> inputs, UnaryOperator<String> edit) throws Exception {
        Path page = Reports.writeAtomically(
                dir.resolve(name + ".html"), edit.apply(Reports.renderFiles(inputs, Format.HTML)));
        Path png = dir.resolve(name + ".png");
        Path log = dir.resolve(name + ".log");
        Process process = new ProcessBuilder(
                        chromium.toString(),
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--no-first-run",
                        "--user-data-dir=" + dir.resolve("profile-" + name),
                        "--screenshot=" + png,
                        "--window-size=" + WIDTH + ",2400",
                        page.toUri().toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            assertThat(process.waitFor(90, TimeUnit.SECONDS))
                    .as("chromium finished; its log: %s", log)
                    .isTrue();
        } finally {
            // Chromium starts helper processes: end every one of them, children first.
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(png)
                .as("screenshot; chromium log:\n%s", Files.readString(log))
                .isRegularFile();
        return ImageIO.read(new File(png.toString()));
    }

    // Colours as CSS computes them from hsl() may differ by a unit of rounding.
    private static int countNear(BufferedImage image, int r, int g, int b) {
        int count = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int p = image.getRGB(x, y);
                if (Math.abs((p >> 16 & 0xff) - r) <= 2
                        && Math.abs((p >> 8 & 0xff) - g) <= 2
                        && Math.abs((p & 0xff) - b) <= 2) {
                    count++;
                }
            }
        }
        return count;
    }

    private static int countPixels(BufferedImage image, int rgb) {
        int count = 0;
        for (int y = 0; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                if ((image.getRGB(x, y) & 0xffffff) == rgb) {
                    count++;
                }
            }
        }
        return count;
    }
}
