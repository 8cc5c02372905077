package dev.ctxprobe.testsupport;

import dev.ctxprobe.embedded.DemoModel;
import dev.ctxprobe.embedded.GgufWriter;
import dev.ctxprobe.embedded.ModelShape;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real llama-server for tests: the one {@code .ci/install-llama-server} installs ({@value #ENV}, else its default
 * install path), started as a child process whose pid is the server's (the installed wrapper {@code exec}s), and
 * ended by that pid. Tests that need it call {@link #require()}, which skips them where it is missing and fails them
 * where CI lists {@code llama-server} in {@code CTXPROBE_REQUIRE}.
 */
public final class LlamaServer implements AutoCloseable {
    /** The wrapper's path, as {@code .ci/run} exports it. */
    public static final String ENV = "CTXPROBE_LLAMA_SERVER";

    private static final Pattern BUILD = Pattern.compile("\\(build (\\d+)");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static Found found;

    private final Process process;
    private final Path log;
    private final int port;

    private LlamaServer(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** The installed server and what its {@code --version} said, or why there is none. */
    private record Found(Path binary, String version, String problem) {}

    /** The installed llama-server's path; skips the test (or fails it where CI requires it) when it does not run. */
    public static Path require() {
        Found f = find();
        Required.assumePresent("llama-server", f.problem == null, f.problem);
        return f.binary;
    }

    /** The first line of {@code --version}, e.g. {@code version: 0.7.0 (build 11669, commit Debian)}. */
    public static String version() {
        require();
        return found.version;
    }

    /** The build number that {@code --version} names. */
    public static int build() {
        Matcher m = BUILD.matcher(version());
        if (!m.find()) {
            throw new IllegalStateException("no build number in llama-server --version: " + version());
        }
        return Integer.parseInt(m.group(1));
    }

    private static synchronized Found find() {
        if (found == null) {
            found = probe();
        }
        return found;
    }

    private static Found probe() {
        String explicit = System.getenv(ENV);
        Path binary = explicit != null && !explicit.isBlank() ? Path.of(explicit) : defaultPath();
        if (!Files.isExecutable(binary)) {
            String from = explicit != null && !explicit.isBlank() ? " (from " + ENV + ")" : "";
            return new Found(
                    binary,
                    null,
                    binary + from + " is no executable file; run .ci/install-llama-server, which prints the path to"
                            + " set " + ENV + " to");
        }
        try {
            Process p = new ProcessBuilder(binary.toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Found(binary, null, binary + " --version did not finish within 30 s");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            String first =
                    text.lines().filter(l -> l.contains("build")).findFirst().orElse(null);
            if (p.exitValue() != 0 || first == null) {
                return new Found(
                        binary,
                        null,
                        binary + " --version exited " + p.exitValue() + ": "
                                + text.strip().lines().reduce((a, b) -> b).orElse("(no output)"));
            }
            return new Found(binary, first.strip(), null);
        } catch (IOException e) {
            return new Found(binary, null, binary + " does not start: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Found(binary, null, "interrupted while running " + binary + " --version");
        }
    }

    /** Where {@code .ci/install-llama-server} puts the wrapper when {@code CTXPROBE_LLAMA_DIR} is unset. */
    static Path defaultPath() {
        String dir = System.getenv("CTXPROBE_LLAMA_DIR");
        Path base = dir != null && !dir.isBlank()
                ? Path.of(dir)
                : Path.of(System.getProperty("user.home"), ".cache", "ctxprobe", "llama-server");
        return base.resolve("llama-server");
    }

    /**
     * A GGUF model the real server loads: ctxprobe's own demo model of that shape (byte vocabulary of 260 ids,
     * training context 1048576), written by its GGUF writer into one cache folder for all tests of a build.
     */
    public static Path model(ModelShape shape) throws IOException {
        return DemoModel.ensure(
                Path.of("target", "test-model-cache").toAbsolutePath(), shape, GgufWriter.WeightType.F32);
    }

    /** Starts the server on a free loopback port with {@code args} after {@code --host} and {@code --port}. */
    public static LlamaServer start(Path logDir, String... args) throws IOException {
        int port = freePort();
        List<String> cmd = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", Integer.toString(port)));
        cmd.addAll(List.of(args));
        Launched l = launch(logDir, 0, cmd);
        return new LlamaServer(l.process, l.log, port);
    }

    private record Launched(Process process, Path log) {}

    /** What a server that must end by itself printed, and its exit code. */
    public record Exit(int code, String output) {}

    /**
     * Runs the server with exactly {@code args} until it exits by itself (a start that must fail), under an
     * address-space limit of {@code addressSpaceKiB} when that is positive (so that an allocation too large for
     * the limit fails the same way on any machine, instead of filling a large machine's memory).
     */
    public static Exit runToExit(Path logDir, long addressSpaceKiB, Duration timeout, String... args)
            throws IOException, InterruptedException {
        Launched l = launch(logDir, addressSpaceKiB, List.of(args));
        Process p = l.process;
        Path log = l.log;
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("llama-server " + String.join(" ", args) + " still ran after " + timeout + ":\n"
                    + Files.readString(log, StandardCharsets.UTF_8));
        }
        return new Exit(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }

    private static Launched launch(Path logDir, long addressSpaceKiB, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        if (addressSpaceKiB > 0) {
            // ulimit then exec: the limit applies to the server, and the pid stays the one Java knows.
            cmd.addAll(List.of("/bin/sh", "-c", "ulimit -v \"$1\" && shift && exec \"$@\"", "sh"));
            cmd.add(Long.toString(addressSpaceKiB));
        }
        cmd.add(require().toString());
        cmd.addAll(args);
        Files.createDirectories(logDir);
        Path log = Files.createTempFile(logDir, "llama-server-", ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        // The server reads LLAMA_ARG_* as defaults for its flags: none of the caller's may leak in.
        pb.environment().keySet().removeIf(k -> k.startsWith("LLAMA_ARG_"));
        Process p = pb.start();
        p.getOutputStream().close();
        return new Launched(p, log);
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on the loopback interface", e);
        }
    }

    public int port() {
        return port;
    }

    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** The server's pid, which is the process ended by {@link #stop}. */
    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /** Everything the server printed so far (stdout and stderr together). */
    public String output() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    /**
     * The log once it holds {@code text}, waiting up to 5 s: llama.cpp writes its log from a thread of its own, so
     * a startup line may reach the file after /health already answers 200.
     */
    public String outputOnceItHas(String text) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        String out = output();
        while (!out.contains(text) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            out = output();
        }
        return out;
    }

    /** Polls {@code /health} until it answers 200; fails when the server exits first or {@code timeout} passes. */
    public void awaitReady(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError(
                        "llama-server exited with " + process.exitValue() + " before it was ready:\n" + output());
            }
            try {
                if (get("/health").statusCode() == 200) {
                    return;
                }
            } catch (IOException notListeningYet) {
                // The HTTP server starts a moment after the process.
            }
            Thread.sleep(20);
        }
        throw new AssertionError("llama-server was not ready within " + timeout + ":\n" + output());
    }

    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(uri(path))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Sends SIGTERM to the server's pid and waits for it to exit; after {@code grace} it sends SIGKILL and fails.
     * Returns the exit code.
     */
    public int stop(Duration grace) throws InterruptedException, IOException {
        if (!process.isAlive()) {
            return process.exitValue();
        }
        process.destroy();
        if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            return process.exitValue();
        }
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        throw new AssertionError("llama-server did not exit within " + grace + " of SIGTERM:\n" + output());
    }

    /** Waits for the server to exit by itself and returns its exit code; fails when it still runs after {@code timeout}. */
    public int awaitExit(Duration timeout) throws InterruptedException, IOException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("llama-server still runs after " + timeout + ":\n" + output());
        }
        return process.exitValue();
    }

    /** Ends the server if a test left it running: SIGTERM, then SIGKILL after 10 s. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
