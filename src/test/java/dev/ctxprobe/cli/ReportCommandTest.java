package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.report.FrontierLine;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.ResultFiles;
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
    void textByDefaultLeadsWithTheFrontier() throws Exception {
        Run run = ctxprobe("report", SAMPLE);

        assertThat(run.exitCode()).isZero();
        ResultDocument doc = ResultFiles.read(Path.of(SAMPLE));
        assertThat(run.out().lines().limit(2))
                .containsExactly(
                        FrontierLine.line("vllm", 8, doc.frontier().get("vllm"), doc.scenariosOf("vllm")),
                        FrontierLine.line("sglang", 8, doc.frontier().get("sglang"), doc.scenariosOf("sglang")));
        assertThat(run.out()).startsWith("vllm     max 12,032 tokens (next 12,288 fails: kv_insufficient)  5 launches");
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
        assertThat(run.err()).contains("ctxprobe report: " + truncated + ": not valid JSON at line 1, column ");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void aHandEditedFileIsAUsageErrorListingEachProblem() throws Exception {
        Path edited = dir.resolve("results.json");
        Files.writeString(
                edited,
                Files.readString(Path.of(SAMPLE))
                        .replaceFirst("\"target_len\" : 4096", "\"target_len\" : \"4096\"")
                        .replaceFirst("\"success\" : true", "\"success\" : \"yes\""));

        Run run = ctxprobe("report", edited.toString());

        assertThat(run.exitCode()).isEqualTo(Main.USAGE);
        assertThat(run.err().lines())
                .containsExactly(
                        "ctxprobe report: " + edited + ": scenarios[0].target_len: expected an integer, found the"
                                + " string \"4096\"",
                        "ctxprobe report: " + edited + ": scenarios[0].success: expected true or false, found the"
                                + " string \"yes\"",
                        "ctxprobe report: correct the file or leave it out; nothing was written");
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
        assertThat(dir.resolve("png/prefill.png")).isRegularFile();
        assertThat(run.out()).isEmpty();
    }

    @Test
    void formatOptionIsCaseInsensitive() {
        Run run = ctxprobe("report", SAMPLE, "--format", "CSV");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("frontier,source,experiment,run_id,");
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
