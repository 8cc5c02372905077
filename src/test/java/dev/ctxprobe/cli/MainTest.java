package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What ends a command reaches the user through one handler: bad input as sentences with exit code 2, said by the
 * program or by the command, with the help that fits; a fault of ctxprobe's own as one line, the trace in a file.
 */
class MainTest {
    /** A command line, the exit code, and all that stderr says ('\\n' between lines). */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "run --parallel 0|2|ctxprobe: --parallel is how many backends run at once: 1 or more, not 0",
                "plan experiments/demo.yaml --devices 0|2|ctxprobe: --devices is the number of accelerators, 1 or"
                        + " more, e.g. --devices 8",
                "validate no-such.yaml|2|no-such.yaml: no such file: give the path of an experiment file (see"
                        + " experiments/)",
                "serve --ctx-size 0|2|ctxprobe serve: --ctx-size and --threads must be positive, --port within"
                        + " 0..65535\\nTry 'ctxprobe serve --help' for more information.",
            })
    void aCommandEndedByBadInputSaysWhyAndNothingElse(String line, int code, String said) {
        CliRun r = CliRun.of(line.split(" "));
        assertThat(r.exitCode()).isEqualTo(code);
        assertThat(r.err()).isEqualTo(said.replace("\\n", "\n") + "\n");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aCommandCanEndWithItsUsage() {
        CliRun r = CliRun.of("report");
        assertThat(r.exitCode()).isEqualTo(Main.USAGE);
        assertThat(r.err())
                .startsWith("ctxprobe report: no results given: name results files or run folders\nUsage: ctxprobe"
                        + " report ")
                .doesNotContain("ExitException", "\tat ");
    }

    @Test
    void noCommandIsTheUsageOnStderrWithExitCode2() {
        // issue 31: a bare ./ctxprobe printed the usage and exited 0, as if it had done something.
        CliRun r = CliRun.of();
        assertThat(r.exitCode()).isEqualTo(Main.USAGE);
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .startsWith("ctxprobe: give a command: run, validate, plan, report, serve, help\nUsage: ctxprobe ");
    }

    @Test
    void exitCodesAreMappedInOnePlace() {
        assertThat(Main.exitCode(ExitException.usage("bad"))).isEqualTo(Main.USAGE);
        assertThat(Main.exitCode(ExitException.failed("disk full").byCommand())).isEqualTo(Main.FAILED);
        assertThat(Main.exitCode(new dev.ctxprobe.experiment.ExperimentError(Path.of("x.yaml"), 1, 1, "bad")))
                .isEqualTo(Main.USAGE);
        assertThat(Main.exitCode(new IllegalStateException("a bug"))).isEqualTo(Main.FAILED);
    }

    @Test
    void anUnexpectedErrorIsOneLineAndItsTraceGoesToAFile() throws Exception {
        PrintStream old = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream capture = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setErr(capture);
            code = Main.unexpected(new IllegalStateException("the plan has no steps"));
        } finally {
            System.setErr(old);
        }
        String said = err.toString(StandardCharsets.UTF_8);
        assertThat(code).isEqualTo(Main.FAILED);
        assertThat(said.lines()).hasSize(1);
        Matcher m = Pattern.compile(
                        "ctxprobe: an unexpected error stopped ctxprobe \\(the plan has no steps\\); this is a bug in"
                                + " ctxprobe, please report it with (\\S+)\n")
                .matcher(said);
        assertThat(m.matches()).as(said).isTrue();
        Path trace = Path.of(m.group(1));
        try {
            assertThat(Files.readString(trace))
                    .startsWith("java.lang.IllegalStateException: the plan has no steps")
                    .contains("\tat dev.ctxprobe.cli.MainTest");
        } finally {
            Files.deleteIfExists(trace);
        }
        assertThat(said).doesNotContain("IllegalStateException", "\tat ");
    }
}
