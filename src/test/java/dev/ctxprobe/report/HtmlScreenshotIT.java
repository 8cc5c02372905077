package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testsupport.Required;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    private BufferedImage screenshot(String name, List<Path> inputs) throws Exception {
        Path page = Reports.writeAtomically(dir.resolve(name + ".html"), Reports.renderFiles(inputs, Format.HTML));
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
