package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, failures 4 and 5: a 300-character backend name passed validate and was recorded as the engine's
 * startup_crash; a 300-character experiment name and a full disk exited 1 saying "the results written so far are
 * kept" when nothing was, and the full disk left a folder --resume refused. Both are now exit 2 before anything
 * starts, with nothing left behind.
 */
class NamesAndDisksIT {
    @TempDir
    Path dir;

    private Path mounted;

    @AfterEach
    void unmount() throws Exception {
        if (mounted != null) {
            new ProcessBuilder("umount", mounted.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static CliRun ctxprobe(String... args) {
        return CliRun.of(args);
    }

    @Test
    void namesLongerThanAFileNameAreRefusedBeforeLaunch() throws Exception {
        for (String[] names : new String[][] {{"b".repeat(300), "shortexp"}, {"engine", "e".repeat(300)}}) {
            Path exp = FaultRuns.write(dir, "long", List.of(1000L), 0, List.of(new Backend(names[0], null, "")));
            Files.writeString(exp, Files.readString(exp).replace("experiment: long", "experiment: " + names[1]));
            Path out = dir.resolve("out");

            CliRun validate = ctxprobe("validate", exp.toString());
            assertThat(validate.exitCode()).as(validate.err()).isEqualTo(2);
            assertThat(validate.err()).contains("300 characters long").contains("long.yaml:");
            CliRun run = ctxprobe("run", exp.toString(), "--out", out.toString());
            assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
            assertThat(run.err()).contains("300 characters long").doesNotContain("results written so far");
            assertThat(out).as("nothing is created").doesNotExist();
        }
    }

    @Test
    void aFullDiskBeforeTheFirstStepIsExit2WithNothingLeft() throws Exception {
        mounted = dir.resolve("small");
        Files.createDirectories(mounted);
        Process mount = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mounted.toString())
                .redirectErrorStream(true)
                .start();
        boolean ok = mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0;
        String said = new String(mount.getInputStream().readAllBytes()).strip();
        if (!ok) {
            mounted = null;
        }
        Assumptions.assumeTrue(ok, "a small tmpfs is needed to fill a disk (mount needs root): " + said);
        fill(mounted.resolve("filler"));
        Path exp = FaultRuns.write(dir, "full", List.of(1000L), 0, List.of(new Backend("engine", null, "")));
        Path out = mounted.resolve("out");

        CliRun run = ctxprobe("run", exp.toString(), "--out", out.toString());

        assertThat(run.exitCode()).as(run.out() + run.err()).isEqualTo(2);
        assertThat(run.err())
                .contains("No space left on device")
                .contains("nothing was launched")
                .doesNotContain("results written so far");
        try (Stream<Path> left = Files.list(mounted)) {
            assertThat(left.map(p -> p.getFileName().toString()).toList())
                    .as("the folder is left as it was")
                    .containsExactly("filler");
        }
    }

    private static void fill(Path file) throws IOException {
        byte[] block = new byte[1024];
        try (OutputStream o = Files.newOutputStream(file)) {
            while (true) {
                o.write(block);
                o.flush();
            }
        } catch (IOException full) {
            assertThat(full.getMessage()).contains("No space left");
        }
    }
}
