package dev.ctxprobe.hardware;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** Runs a query tool as a child process with a time limit, keeping at most a bounded amount of its output. */
public final class ProcessCommandRunner implements CommandRunner {

    // A missing program: "error=2, No such file or directory" (JDK 17) or "error: 2 (No such file ...)" (JDK 25).
    private static final Pattern NO_SUCH_PROGRAM = Pattern.compile("error(=|: )2\\b");

    private final Duration timeout;
    private final int maxOutputBytes;

    public ProcessCommandRunner(Duration timeout, int maxOutputBytes) {
        this.timeout = timeout;
        this.maxOutputBytes = maxOutputBytes;
    }

    @Override
    public CommandResult run(List<String> command) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("ctxprobe-query", ".out");
            err = Files.createTempFile("ctxprobe-query", ".err");
            // Output goes to files, never an undrained pipe, so a chatty tool cannot block on a full pipe.
            Process process = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(1, TimeUnit.SECONDS);
                return CommandResult.failed(command, "no answer within " + timeout.toMillis() + " ms");
            }
            return CommandResult.exited(command, process.exitValue(), readCapped(out), readCapped(err));
        } catch (IOException e) {
            String message = String.valueOf(e.getMessage());
            boolean absent = NO_SUCH_PROGRAM.matcher(message).find();
            return CommandResult.failed(command, absent ? CommandResult.NOT_INSTALLED : message);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CommandResult.failed(command, "interrupted");
        } finally {
            delete(out);
            delete(err);
        }
    }

    private String readCapped(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(maxOutputBytes), StandardCharsets.UTF_8);
        }
    }

    private static void delete(Path file) {
        if (file == null) {
            return;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // A temp file that cannot be deleted now is retried at exit; the query result still stands.
            file.toFile().deleteOnExit();
        }
    }
}
