package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The {@code ./ctxprobe} script as a user runs it, on the jar the build packaged: on JDK 25 it trains an AOT cache
 * that the JVM then uses. The training fails silently by design (a run without a cache is only slower to start), so
 * nothing else would notice a cache that stopped being made: the JDK 25.0.3 that assembles it crashed on one shape
 * of code (a table of constructor references to picocli's classes), and start to first launch went from 0.45 to 0.9 s.
 */
class ScriptIT {
    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Path JAR = ROOT.resolve("target/ctxprobe.jar");
    private static final Path CACHE = ROOT.resolve("target/ctxprobe.aot");

    @Test
    void theScriptTrainsAnAotCacheThatTheJvmUses() throws Exception {
        assumeTrue(
                Runtime.version().feature() >= 25,
                "the AOT cache is made on JDK 25 and later; this JVM is " + Runtime.version());
        assumeTrue(
                jarIsNewerThanTheSources(),
                "target/ctxprobe.jar is older than the sources, and ./ctxprobe would build it inside this test;"
                        + " run it after package (./mvnw -B verify)");
        Files.deleteIfExists(CACHE);

        Result trained = ctxprobe(Map.of());
        assertThat(trained.code()).as(trained.output()).isZero();
        assertThat(trained.output()).contains("ctxprobe 0.1.0");
        assertThat(Files.size(CACHE)).as("the AOT cache the script trained").isGreaterThan(1 << 20);

        // AOTMode=on (it comes after the script's =auto) makes the JVM refuse to start without a usable cache.
        Result strict = ctxprobe(Map.of("CTXPROBE_JAVA_OPTS", "-XX:AOTMode=on"));
        assertThat(strict.code())
                .as("a JVM that must use the cache: " + strict.output())
                .isZero();
        assertThat(strict.output()).contains("ctxprobe 0.1.0");
    }

    private record Result(int code, String output) {}

    private static Result ctxprobe(Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(ROOT.resolve("ctxprobe").toString(), "--version")
                .directory(ROOT.toFile())
                .redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        try {
            byte[] out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(2, TimeUnit.MINUTES))
                    .as("./ctxprobe --version ends")
                    .isTrue();
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
        }
    }

    /** What the script checks before it builds: no file under src/main, nor the pom, newer than the jar. */
    private static boolean jarIsNewerThanTheSources() throws IOException {
        if (!Files.isRegularFile(JAR)) {
            return false;
        }
        FileTime jar = Files.getLastModifiedTime(JAR);
        if (Files.getLastModifiedTime(ROOT.resolve("pom.xml")).compareTo(jar) > 0) {
            return false;
        }
        try (Stream<Path> files = Files.walk(ROOT.resolve("src/main"))) {
            return files.allMatch(f -> {
                try {
                    return Files.getLastModifiedTime(f).compareTo(jar) <= 0;
                } catch (IOException gone) {
                    return true;
                }
            });
        }
    }
}
