package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ctxprobe report}: exit codes, format choice, output files. */
class ReportCommandTest {
    private static final String SAMPLE = "src/test/resources/dev/ctxprobe/report/sample-run/results.json";

    @TempDir
    Path dir;

    record Run(int exitCode, String out, String err) {}

    private static synchronized Run ctxprobe(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            return new Run(
                    Main.execute(args), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    void textByDefaultLeadsWithTheFrontier() {
        Run run = ctxprobe("report", SAMPLE);

        assertThat(run.exitCode()).isZero();
        assertThat(run.out().lines().findFirst().orElseThrow())
                .isEqualTo("vllm     max 12,032 tokens (next 12,288 fails: kv_insufficient)  3 launches  TTFT 837 ms"
                        + "  predicted max 12,256  mode relaunch");
    }

    @Test
    void noInputsIsAUsageError() {
        Run run = ctxprobe("report");

        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err()).contains("no results given").contains("Usage: ctxprobe report");
    }

    @Test
    void missingFileIsAUsageErrorNamingIt() {
        Run run = ctxprobe("report", SAMPLE, dir.resolve("gone.json").toString());

        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err()).contains("gone.json: no such file or folder");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void truncatedFileIsAUsageErrorWithThePosition() throws Exception {
        Path truncated = dir.resolve("results.json");
        Files.writeString(truncated, "{\"metadata\": {\"experiment\": \"x\"}, \"scenarios\": [{\"backend\": \"vl");

        Run run = ctxprobe("report", truncated.toString(), "--format", "html");

        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err()).contains(truncated + ": not valid JSON at line 1, column ");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void unknownFormatIsAUsageErrorListingTheFormats() {
        Run run = ctxprobe("report", SAMPLE, "--format", "pdf");

        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err()).contains("unknown report format 'pdf' (expected text, md, html, csv)");
    }

    @Test
    void outFileExtensionChoosesTheFormatAndPngsAreWritten() throws Exception {
        Path out = dir.resolve("sub/report.html");

        Run run = ctxprobe(
                "report",
                SAMPLE,
                "--out",
                out.toString(),
                "--png",
                dir.resolve("png").toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(Files.readString(out)).startsWith("<!DOCTYPE html>");
        assertThat(dir.resolve("png/ttft.png")).isRegularFile();
        assertThat(dir.resolve("png/throughput.png")).isRegularFile();
        assertThat(run.out()).isEmpty();
    }

    @Test
    void formatOptionIsCaseInsensitive() {
        Run run = ctxprobe("report", SAMPLE, "--format", "CSV");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("source,experiment,run_id,");
    }

    @Test
    void aReportThatCannotBeWrittenSaysWhyInOneLine() throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "");
        Run run = ctxprobe("report", SAMPLE, "--out", file.resolve("report.md").toString());
        assertThat(run.exitCode()).isEqualTo(Main.FAILED);
        assertThat(run.err())
                .matches(
                        "ctxprobe report: cannot write \\S+/file \\(a file of that name is in the way\\); give another --out\n")
                .doesNotContain("Exception");
    }
}
