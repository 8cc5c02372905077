package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failure 7: a results file that cannot be written (a full disk, a file-size limit) ends the run with one
 * sentence and exit code 1; the previous results stay, nothing is left running, and the temporary files of
 * interrupted writes are removed at the next write.
 */
class IoErrorsIT {
    @TempDir
    Path dir;

    private Process ctxprobe;

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    @Test
    void aResultsFileThatCannotGrowEndsTheRunInOneSentenceAndKeepsTheLastStep() throws Exception {
        Path out = dir.resolve("sizes");
        long one = resultsSize(out, "one", List.of(1000L));
        long two = resultsSize(out, "two", List.of(1000L, 2000L));
        assertThat(two - one).as("what one more step adds to results.json").isGreaterThan(2048);
        // A file-size limit (RLIMIT_FSIZE, which the JVM turns into "File too large") between the two: the first
        // step's save fits, the second's does not. A real full disk fails the same write the same way.
        long limitKib = (one + two) / 2 / 1024;

        Path exp =
                FaultRuns.write(dir, "full", List.of(1000L, 2000L, 3000L), 0, List.of(new Backend("engine", null, "")));
        List<String> argv = new ArrayList<>(List.of("bash", "-c", "ulimit -f " + limitKib + "; exec \"$@\"", "bash"));
        argv.addAll(FaultRuns.ctxprobeArgv(
                List.of("-XX:-UsePerfData"),
                "run",
                exp.toString(),
                "--out",
                dir.resolve("out").toString()));
        Path log = dir.resolve("ctxprobe.log");
        ctxprobe = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        assertThat(ctxprobe.waitFor(60, TimeUnit.SECONDS)).isTrue();

        String output = Files.readString(log);
        System.out.println("results.json limited to " + limitKib + " KiB; ctxprobe said:\n" + output.strip());
        assertThat(ctxprobe.exitValue()).as(output).isEqualTo(1);
        List<String> problems =
                output.lines().filter(l -> l.startsWith("ctxprobe:")).toList();
        assertThat(problems).as(output).hasSize(1);
        assertThat(problems.getFirst()).contains("results.json").contains("File too large");
        assertThat(output).doesNotContain("\tat ").doesNotContain("Exception");
        Path runDir = FaultRuns.runDir(dir.resolve("out"), "full").orElseThrow();
        JsonNode kept = FaultRuns.results(runDir);
        assertThat(kept.get("scenarios")).as("the last step saved").hasSize(1);
        assertThat(FaultRuns.markedProcesses(runDir)).as("processes of the run").isEmpty();
        FaultRuns.assertGroupsGone(FaultRuns.pidFileGroups(runDir));
        try (var files = Files.list(runDir)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".json.tmp"));
        }
    }

    @Test
    void aTemporaryFileLeftByAKilledWriteIsRemovedAtTheNextWrite() throws Exception {
        Path exp = FaultRuns.write(dir, "stale", List.of(1000L), 0, List.of(new Backend("engine", null, "")));
        Path out = dir.resolve("out");
        CliRun first = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");
        assertThat(first.exitCode()).as(first.err()).isZero();
        Path runDir = FaultRuns.runDir(out, "stale").orElseThrow();
        Path stale = runDir.resolve(".results-4242424242.json.tmp");
        Files.writeString(stale, "{\"metadata\": {\"half");

        CliRun resumed = CliRun.of("run", "--resume", runDir.toString(), "--quiet");

        assertThat(resumed.exitCode()).as(resumed.err()).isZero();
        assertThat(stale).doesNotExist();
    }

    private long resultsSize(Path out, String name, List<Long> targets) throws Exception {
        Path exp = FaultRuns.write(dir, name, targets, 0, List.of(new Backend("engine", null, "")));
        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");
        assertThat(run.exitCode()).as(run.err()).isZero();
        return Files.size(FaultRuns.runDir(out, name).orElseThrow().resolve("results.json"));
    }
}
