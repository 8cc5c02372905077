package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * {@code ctxprobe} on a real pseudo-terminal, through python3's {@code pty} module ({@code pty/terminal.py} in the
 * test resources): what a user's terminal gets, byte for byte, and what a closed terminal does to a run.
 */
final class PtyRuns {
    private static final Path TERMINAL = Path.of("src/test/resources/pty/terminal.py");

    private PtyRuns() {}

    /** A run under a terminal: the process that holds it, and the file its bytes go to. */
    record Terminal(Process process, Path capture, Path hangupWhen) {
        /** Hangs the terminal up now, as closing its window does. */
        void hangUp() throws IOException {
            Files.writeString(hangupWhen, "");
        }

        /** "exit N", "signal N" or "timeout", once the terminal's command ended. */
        String outcome(int limitS) throws InterruptedException, IOException {
            assertThat(process.waitFor(limitS, TimeUnit.SECONDS))
                    .as("the terminal script ends")
                    .isTrue();
            return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        }

        byte[] bytes() throws IOException {
            return Files.readAllBytes(capture);
        }
    }

    /** Skips the test, saying why, where python3 is missing. */
    static void assumePython() {
        boolean found;
        try {
            found = new ProcessBuilder("python3", "-c", "import pty").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            found = false;
        }
        Assumptions.assumeTrue(found, "python3 with its pty module is needed to give ctxprobe a terminal");
    }

    /** Starts {@code ctxprobe ARGS} on a new terminal in {@code dir}, with more environment variables. */
    static Terminal start(Path dir, Map<String, String> env, String... args) throws IOException {
        Path capture = dir.resolve("terminal.bin");
        Path hangup = dir.resolve("hang-up-now");
        List<String> argv = new ArrayList<>(
                List.of("python3", TERMINAL.toString(), capture.toString(), "--hangup-when", hangup.toString(), "--"));
        argv.addAll(FaultRuns.ctxprobeArgv(List.of(), args));
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectError(dir.resolve("terminal.err").toFile());
        pb.environment().putAll(env);
        pb.environment().put("TERM", "xterm-256color");
        return new Terminal(pb.start(), capture, hangup);
    }
}
