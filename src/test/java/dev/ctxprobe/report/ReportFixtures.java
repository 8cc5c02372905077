package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.Main;
import dev.ctxprobe.results.ResultFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Shared inputs of the report tests: the sample run, the seeds, and running the command with captured output. */
final class ReportFixtures {
    /** Relative on purpose: reports show the path as given, so goldens do not depend on the checkout's place. */
    static final Path SAMPLE_RUN = Path.of("src/test/resources/dev/ctxprobe/report/sample-run");

    static final Path SAMPLE = SAMPLE_RUN.resolve("results.json");

    /**
     * A matrix run on the real llama-server, -ctk f16|q8_0 with -fa on by -np 1|2 against -c 4096, on Slurm with
     * --parallel 2 (LlamaServerIT's matrix).
     */
    static final Path MATRIX = Path.of("src/test/resources/dev/ctxprobe/report/matrix-run/results.json");

    /**
     * A capacity map on the test engine, vLLM-like and SGLang-like with a shared KV pool, at 1, 2 and 4 requests at
     * once ({@code CapacityRun}, recorded by {@code SampleRunIT}).
     */
    static final Path CAPACITY = Path.of("src/test/resources/dev/ctxprobe/report/capacity-run/results.json");

    private ReportFixtures() {}

    /** The inputs as the report reads them. */
    static List<ReportInput> read(Path... inputs) {
        try {
            return Reports.read(List.of(inputs));
        } catch (ResultFiles.ResultFileException e) {
            throw new AssertionError("a fixture cannot be read: " + e.getMessage(), e);
        }
    }

    /** The sample run as the report reads it. */
    static ReportInput sample() {
        return read(SAMPLE).getFirst();
    }

    /** The seeds: the two real result files of the shell loops ctxprobe replaces, kept in the repository. */
    static final Path SEEDS = Path.of("seeds");

    static List<Path> seedFiles(Path seeds) throws IOException {
        try (Stream<Path> files = Files.list(seeds)) {
            List<Path> found =
                    files.filter(p -> p.toString().endsWith(".json")).sorted().toList();
            assertThat(found).hasSize(2);
            return found;
        }
    }

    /** What {@code ctxprobe ARGS} printed and returned. */
    record Run(int exitCode, String out, String err) {}

    static synchronized Run ctxprobe(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }
}
