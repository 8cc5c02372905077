package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/results.md#reading-results: the text report fits 120 columns (the seeds read together, two runs compared),
 * {@code --wide} keeps every column on one line, and {@code --label} names compared runs.
 */
class ReportWidthTest {
    private static final String SAMPLE = "src/test/resources/dev/ctxprobe/report/sample-run/results.json";
    private static final String MATRIX = "src/test/resources/dev/ctxprobe/report/matrix-run/results.json";

    private static List<String> seeds() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("seeds"))) {
            return files.filter(f -> f.toString().endsWith(".json"))
                    .map(Path::toString)
                    .sorted()
                    .toList();
        }
    }

    private static CliRun report(List<String> inputs, String... options) {
        List<String> args = new ArrayList<>(List.of("report"));
        args.addAll(inputs);
        args.addAll(List.of(options));
        return CliRun.of(args.toArray(String[]::new));
    }

    private static int widest(String text) {
        return text.lines().mapToInt(l -> l.codePointCount(0, l.length())).max().orElse(0);
    }

    @Test
    void theSeedsAndTwoComparedRunsFit120Columns() throws Exception {
        for (List<String> inputs : List.of(seeds(), List.of(SAMPLE, MATRIX), List.of(SAMPLE, SAMPLE))) {
            CliRun r = report(inputs);

            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(widest(r.out()))
                    .as("widest line of the report of %s", inputs)
                    .isLessThanOrEqualTo(120);
            // Nothing is lost: the P800's long cause, with its path, is still there, wrapped below its step.
            if (inputs.equals(seeds())) {
                assertThat(r.out())
                        .contains("\n    bench_serving exited with code 137; see\n    /data1/yy/sskj/experiments/")
                        .containsPattern("\n +\\(server's\\) +\\(target / TTFT\\)\n");
            }
        }
    }

    @Test
    void wideKeepsEveryColumnOnOneLine() throws Exception {
        CliRun wide = report(seeds(), "--wide");

        assertThat(wide.exitCode()).as(wide.err()).isZero();
        assertThat(widest(wide.out())).isGreaterThan(120);
        assertThat(wide.out())
                .contains("prefill tok/s at max (target / TTFT)")
                .contains("input tok/s (input tokens / duration)")
                .contains("bench_serving exited with code 137; see /data1/yy/sskj/experiments/");
        assertThat(report(seeds()).out()).doesNotContain("input tok/s (input tokens / duration)");
    }

    @Test
    void labelsNameComparedRunsInsteadOfTheirHardware() throws Exception {
        CliRun r = report(List.of(SAMPLE, MATRIX), "--label", "before", "--label", "after");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .startsWith("before / vllm ")
                .contains("\nafter / llama[ctk=f16,np=1] ")
                .contains("\n== before  sample_frontier")
                .doesNotContain("test engine on CPU");

        CliRun same = report(List.of(SAMPLE, SAMPLE), "--label", "a", "--label", "a");
        assertThat(same.out()).contains("a (input 1) / vllm").contains("a (input 2) / vllm");

        CliRun wrong = report(List.of(SAMPLE, MATRIX), "--label", "only-one");
        assertThat(wrong.exitCode()).isEqualTo(Main.USAGE);
        assertThat(wrong.err())
                .contains("give one --label per RESULTS: 1 --label for 2 RESULTS")
                .doesNotContain("Exception");
    }
}
