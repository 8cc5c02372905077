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

        Result trained = ctxprobe(Map.of(), "--version");
        assertThat(trained.code()).as(trained.output()).isZero();
        assertThat(trained.output()).contains("ctxprobe 0.1.0");
        // issue 31: the first use said nothing for the seconds the training takes.
        assertThat(trained.output())
                .containsPattern("ctxprobe: writing the start-up cache target/ctxprobe.aot \\(once per build; [^)]+\\)")
                .containsPattern("ctxprobe: start-up cache written in \\d+ s");
        assertThat(Files.size(CACHE)).as("the AOT cache the script trained").isGreaterThan(1 << 20);

        // AOTMode=on (it comes after the script's =auto) makes the JVM refuse to start without a usable cache.
        Result strict = ctxprobe(Map.of("CTXPROBE_JAVA_OPTS", "-XX:AOTMode=on"), "--version");
        assertThat(strict.code())
                .as("a JVM that must use the cache: " + strict.output())
                .isZero();
        assertThat(strict.output()).contains("ctxprobe 0.1.0").doesNotContain("start-up cache");
    }

    @Test
    void theCommandsItSuggestsNameTheProgramAsTyped(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assumeTrue(
                jarIsNewerThanTheSources(),
                "target/ctxprobe.jar is older than the sources, and ./ctxprobe would build it inside this test;"
                        + " run it after package (./mvnw -B verify)");
        Files.writeString(dir.resolve("experiment.yaml"), "experiment: x\n");
        Files.writeString(dir.resolve("results.json"), "{}");

        Result run = ctxprobe(Map.of(), "run", dir.toString());

        assertThat(run.code()).as(run.output()).isEqualTo(Main.USAGE);
        assertThat(run.output()).contains("continue it with '" + ROOT.resolve("ctxprobe") + " run --resume " + dir);
        Result none = ctxprobe(Map.of(), "run", "--nope");
        assertThat(none.output()).contains("Try '" + ROOT.resolve("ctxprobe") + " run --help'");
    }

    @Test
    void theFirstUseSaysItBuildsTheJarHowLongItTookAndWhenTheBuildFailed(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        assumeTrue(
                Files.isRegularFile(JAR), "target/ctxprobe.jar is not built; run it after package (./mvnw -B verify)");
        // A clone as the script sees it: the script, its JDK finder, a pom and sources, no target. Maven itself is
        // replaced by a stand-in build (a full one takes a minute), which fails first and then packages the jar.
        Files.copy(ROOT.resolve("ctxprobe"), dir.resolve("ctxprobe"));
        Files.createDirectories(dir.resolve(".mvn"));
        Files.copy(ROOT.resolve(".mvn/find-jdk.sh"), dir.resolve(".mvn/find-jdk.sh"));
        Files.createDirectories(dir.resolve("src/main"));
        Files.writeString(dir.resolve("pom.xml"), "<project/>\n");
        Path mvnw = dir.resolve("mvnw");
        Files.writeString(mvnw, "#!/bin/sh\necho 'stand-in build: no compiler here' >&2\nexit 1\n");
        mvnw.toFile().setExecutable(true);

        Result failed = ctxprobe(dir, Map.of(), "--version");

        assertThat(failed.code()).as(failed.output()).isEqualTo(1);
        assertThat(failed.output())
                .contains("ctxprobe: building target/ctxprobe.jar (first use; about a minute")
                .contains("stand-in build: no compiler here")
                .contains("ctxprobe: the build failed; see the output above.");

        Files.writeString(mvnw, "#!/bin/sh\nmkdir -p target && cp '" + JAR + "' target/ctxprobe.jar\n");
        Result built = ctxprobe(dir, Map.of(), "--version");

        assertThat(built.code()).as(built.output()).isZero();
        assertThat(built.output())
                .contains("ctxprobe: building target/ctxprobe.jar (first use; about a minute")
                .containsPattern("ctxprobe: built in \\d+ s")
                .contains("ctxprobe ");

        Files.writeString(dir.resolve("src/main/Changed.java"), "class Changed {}\n");
        Files.setLastModifiedTime(
                dir.resolve("target/ctxprobe.jar"), FileTime.fromMillis(System.currentTimeMillis() - 60_000));
        Result rebuilt = ctxprobe(dir, Map.of(), "--version");

        assertThat(rebuilt.output()).contains("(the sources changed since the last build; about a minute");
        Result again = ctxprobe(dir, Map.of(), "--version");
        assertThat(again.output())
                .as("a jar newer than the sources is not built again")
                .doesNotContain("building");
    }

    private record Result(int code, String output) {}

    private static Result ctxprobe(Map<String, String> env, String... args) throws IOException, InterruptedException {
        return ctxprobe(ROOT, env, args);
    }

    private static Result ctxprobe(Path root, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        java.util.List<String> command = new java.util.ArrayList<>(
                java.util.List.of(root.resolve("ctxprobe").toString()));
        command.addAll(java.util.List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        try {
            byte[] out = p.getInputStream().readAllBytes();
            assertThat(p.waitFor(2, TimeUnit.MINUTES))
                    .as("./ctxprobe " + String.join(" ", args) + " ends")
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
