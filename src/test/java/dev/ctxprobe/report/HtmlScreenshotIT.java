package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testsupport.Required;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Renders the sample report in headless Chromium, where it is installed, and checks the page is drawn:
 * the charts' series colours appear, so the inline SVG rendered under the page's Content-Security-Policy.
 */
class HtmlScreenshotIT {
    @TempDir
    Path dir;

    @Test
    void chromiumRendersTheReportWithItsCharts() throws Exception {
        Path chromium = List.of("/usr/bin/chromium", "/usr/bin/chromium-browser").stream()
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst()
                .orElse(null);
        Required.assumePresent("chromium", chromium != null, "no /usr/bin/chromium (Debian package chromium)");
        Path page = Reports.writeAtomically(
                dir.resolve("report.html"), Reports.render(List.of(ReportFixtures.SAMPLE), Format.HTML));
        Path png = dir.resolve("report.png");
        Path log = dir.resolve("chromium.log");
        Process process = new ProcessBuilder(
                        chromium.toString(),
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--disable-background-networking",
                        "--disable-component-update",
                        "--disable-sync",
                        "--no-first-run",
                        "--user-data-dir=" + dir.resolve("profile"),
                        "--screenshot=" + png,
                        "--window-size=1280,2000",
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

        BufferedImage image = ImageIO.read(new File(png.toString()));
        assertThat(image.getWidth()).isEqualTo(1280);
        assertThat(countPixels(image, 0x1f77b4))
                .as("pixels of the first series' colour")
                .isGreaterThan(200);
        assertThat(countPixels(image, 0xff7f0e))
                .as("pixels of the second series' colour")
                .isGreaterThan(200);
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
