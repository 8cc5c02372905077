package dev.ctxprobe.testengine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** How tests launch {@link TestEngine} as a child process with the same JVM and classpath as themselves. */
public final class TestEngines {

    private TestEngines() {}

    /** The java binary running the tests. */
    public static String javaBin() {
        return ProcessHandle.current()
                .info()
                .command()
                .orElseGet(() ->
                        Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** The test classpath, which holds the test engine and Jackson. */
    public static String classpath() {
        return System.getProperty("java.class.path");
    }

    /** The argv that starts the test engine with the given engine options. */
    public static List<String> command(String... engineArgs) {
        List<String> command = new ArrayList<>(List.of(javaBin(), "-cp", classpath(), TestEngine.class.getName()));
        command.addAll(List.of(engineArgs));
        return command;
    }

    /** Starts the test engine with stdout and stderr both written to the log file. */
    public static Process start(Path log, String... engineArgs) throws IOException {
        return new ProcessBuilder(command(engineArgs))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }

    /** A loopback port that was free a moment ago. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }
}
