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

/** A fault of ctxprobe's own that reaches the top: one line for the user, the trace in a file for the report. */
class MainTest {
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
