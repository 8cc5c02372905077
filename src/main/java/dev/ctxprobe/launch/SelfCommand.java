package dev.ctxprobe.launch;

import java.util.ArrayList;
import java.util.List;

/**
 * Lets an experiment say {@code ctxprobe serve ...}: the first word {@code ctxprobe} becomes this JVM's java,
 * flags and classpath, so the embedded engine runs from the same build whether ctxprobe runs from the jar or
 * from test classes.
 */
public final class SelfCommand {
    static final String WORD = "ctxprobe";

    private SelfCommand() {}

    /** The argv to execute for {@code argv}: unchanged unless its first word is {@code ctxprobe}. */
    public static List<String> expand(List<String> argv) {
        if (argv.isEmpty() || !argv.getFirst().equals(WORD)) {
            return argv;
        }
        List<String> out = new ArrayList<>(prefix());
        out.addAll(argv.subList(1, argv.size()));
        return out;
    }

    /** java, its flags and classpath, and the main class of this ctxprobe. */
    public static List<String> prefix() {
        String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
        return List.of(
                java,
                "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                // llama.cpp's compute threads may still run while the JVM exits on SIGTERM; a crash report of
                // that teardown belongs in the temp folder, not in the folder the user runs ctxprobe from.
                "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/ctxprobe-serve-hs_err_%p.log",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.ctxprobe.cli.Main");
    }
}
