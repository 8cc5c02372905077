package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriteHtmlTest {
    @TempDir
    Path runFolder;

    @Test
    void writesReportHtmlIntoTheRunFolder() throws Exception {
        Files.copy(ReportFixtures.SAMPLE, runFolder.resolve("results.json"));

        Path html = Reports.writeHtml(runFolder);

        assertThat(html).isEqualTo(runFolder.resolve("report.html"));
        String page = Files.readString(html);
        assertThat(page)
                .startsWith("<!DOCTYPE html>")
                .contains("<dd>results.json</dd>")
                .endsWith("</html>\n");
        assertThat(page).doesNotContain(runFolder.toString());
        // The permissions of any other file written there (not a temporary file's owner-only ones).
        Path plain = Files.writeString(runFolder.resolve("plain.txt"), "x");
        assertThat(Files.getPosixFilePermissions(html)).isEqualTo(Files.getPosixFilePermissions(plain));
        Files.delete(plain);
        // No temporary file left behind.
        try (var files = Files.list(runFolder)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("results.json", "report.html");
        }
    }
}
