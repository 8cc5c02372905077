package dev.ctxprobe.results;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProvenanceTest {
    @TempDir
    Path dir;

    @Test
    void outsideGitTheCommitIsEmptyAndClean() throws Exception {
        Path file = Files.writeString(dir.resolve("e.yaml"), "x: 1\n");
        assertThat(Provenance.git(file)).isEqualTo(new Provenance.Git("", "clean"));
    }

    @Test
    void aStalledGitIsGivenUpAfterItsFiveSecondsNotWaitedForForever() throws Exception {
        // A 'git' first on PATH that never answers, as on a hung network filesystem.
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path git = Files.writeString(bin.resolve("git"), "#!/bin/sh\nexec sleep 600\n");
        Files.setPosixFilePermissions(git, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path file = Files.writeString(dir.resolve("e.yaml"), "x: 1\n");
        ProcessBuilder child = new ProcessBuilder(
                        ProcessHandle.current().info().command().orElseThrow(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        ProvenanceProbe.class.getName(),
                        file.toString())
                .redirectErrorStream(true);
        Map<String, String> env = child.environment();
        env.put("PATH", bin + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        long t0 = System.nanoTime();
        Process p = child.start();
        boolean ended = p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes());

        assertThat(ended).as("Provenance.git returned within its deadline").isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(25));
        assertThat(out.strip()).isEqualTo("Git[commit=, dirty=clean]");
    }
}
