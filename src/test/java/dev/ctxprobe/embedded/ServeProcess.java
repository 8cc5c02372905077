package dev.ctxprobe.embedded;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A real {@code ctxprobe serve} child process, launched the way the harness does, with its output in a file. */
final class ServeProcess implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("ctxprobe-serve: ready on http://127\\.0\\.0\\.1:(\\d+) ");

    final Process process;
    final Path log;

    private ServeProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static ServeProcess start(Path logDir, String... serveArgs) throws IOException {
        return start(logDir, List.of(), serveArgs);
    }

    /** With these JVM flags before the main class, e.g. {@code -Djava.io.tmpdir=...}. */
    static ServeProcess start(Path logDir, List<String> jvmFlags, String... serveArgs) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElseThrow());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(jvmFlags);
        // One cache for all tests of a build, so the demo model is generated once.
        cmd.add("-D" + DemoModel.CACHE_PROPERTY + "="
                + Path.of("target", "test-model-cache").toAbsolutePath());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("dev.ctxprobe.cli.Main");
        cmd.add("serve");
        cmd.addAll(List.of(serveArgs));
        Path log = Files.createTempFile(logDir, "serve-", ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new ServeProcess(p, log);
    }

    String output() throws IOException {
        return Files.readString(log, StandardCharsets.ISO_8859_1);
    }

    /** Waits for the ready line and returns the port it names. */
    int awaitReady() throws IOException {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new AssertionError("serve exited with " + process.exitValue() + ":\n" + output());
                    }
                    return readyPort().isPresent();
                });
        return readyPort().orElseThrow();
    }

    private Optional<Integer> readyPort() throws IOException {
        Matcher m = READY.matcher(output());
        return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
