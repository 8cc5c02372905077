package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14's chaos test: a real {@code ctxprobe run} is killed with SIGKILL at random moments (while the JVM starts,
 * while a server loads, mid-request, while a server stops, while results are saved) and resumed, a bounded number of
 * times, until a resume finishes. The final steps must equal an uninterrupted run's, and no process of any launch
 * may remain. The seed is printed; {@code -Dctxprobe.chaos.seed=N} replays one.
 */
class ChaosIT {
    private static final int KILLS = 5;
    private static final long MIN_DELAY_MS = 200;
    private static final List<Long> TARGETS = List.of(500L, 1000L, 1500L);

    @TempDir
    Path dir;

    private Process ctxprobe;

    @AfterEach
    void endWhatIsLeft() throws IOException {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        for (Path run : runFolders(dir.resolve("out"))) {
            FaultRuns.markedProcesses(run).forEach(pid -> dev.ctxprobe.launch.ProcessGroups.signalProcess(pid, true));
        }
    }

    @Test
    void killedAtRandomMomentsAndResumedTheRunEndsAsAnUninterruptedOne() throws Exception {
        long seed = Long.getLong("ctxprobe.chaos.seed", System.nanoTime());
        Random random = new Random(seed);
        System.out.println("chaos seed " + seed + " (replay with -Dctxprobe.chaos.seed=" + seed + ")");
        // A backend that serves every length, and one that refuses the largest: both outcomes must survive.
        List<Backend> backends = List.of(
                new Backend("serves", null, "--prefill-us-per-token 300"),
                new Backend("refuses", null, "--prefill-us-per-token 300 --refuse-at 1600"));
        Path exp = FaultRuns.write(dir, "chaos", TARGETS, 1, backends);

        long t0 = System.nanoTime();
        Path reference = dir.resolve("reference");
        CliRun whole = CliRun.of("run", exp.toString(), "--out", reference.toString(), "--quiet");
        assertThat(whole.exitCode()).as(whole.out() + whole.err()).isZero();
        JsonNode expected =
                FaultRuns.results(FaultRuns.runDir(reference, "chaos").orElseThrow());
        double referenceS = (System.nanoTime() - t0) / 1e9;

        Path out = dir.resolve("out");
        List<String> moments = new ArrayList<>();
        int kills = 0;
        int attempts = 0;
        int exit;
        while (true) {
            attempts++;
            Path resumable = resumable(out);
            List<String> args = resumable == null
                    ? List.of("run", exp.toString(), "--out", out.toString(), "--quiet")
                    : List.of("run", "--resume", resumable.toString(), "--quiet");
            Path log = dir.resolve("ctxprobe-" + attempts + ".log");
            ctxprobe = FaultRuns.startCtxprobe(log, args.toArray(String[]::new));
            if (kills < KILLS) {
                // Up to half an uninterrupted run: each start gets a step or two further before it is killed.
                long maxDelay = Math.max(MIN_DELAY_MS + 1, (long) (referenceS * 500));
                long delay = MIN_DELAY_MS + (long) (random.nextDouble() * (maxDelay - MIN_DELAY_MS));
                if (!ctxprobe.waitFor(delay, TimeUnit.MILLISECONDS)) {
                    String at = moment(out);
                    FaultRuns.signal(ctxprobe.pid(), "KILL");
                    assertThat(ctxprobe.waitFor(10, TimeUnit.SECONDS)).isTrue();
                    kills++;
                    moments.add(delay + " ms (" + at + ")");
                    continue;
                }
            }
            assertThat(ctxprobe.waitFor(120, TimeUnit.SECONDS)).as("a run ends").isTrue();
            exit = ctxprobe.exitValue();
            assertThat(exit).as(Files.readString(log)).isZero();
            if (kills >= KILLS || resumable(out) != null) {
                break;
            }
        }
        double chaosS = (System.nanoTime() - t0) / 1e9 - referenceS;

        Path runDir = resumable(out);
        assertThat(runDir).as("the run folder with results").isNotNull();
        JsonNode actual = FaultRuns.results(runDir);
        System.out.printf(
                Locale.ROOT,
                "chaos: %d SIGKILLs over %d starts, at %s; uninterrupted run %.1f s, killed and resumed %.1f s%n",
                kills,
                attempts,
                moments,
                referenceS,
                chaosS);
        assertThat(steps(actual)).as("the steps, in order").isEqualTo(steps(expected));
        for (Backend b : backends) {
            JsonNode want = expected.get("frontier").get(b.name());
            JsonNode got = actual.get("frontier").get(b.name());
            for (String key : List.of("max_ok_target", "min_failed_target", "launches")) {
                assertThat(got.get(key)).as(b.name() + " " + key).isEqualTo(want.get(key));
            }
        }
        assertThat(actual.get("metadata").get("finished_at").isNull()).isFalse();
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();
        for (Path run : runFolders(out)) {
            assertThat(FaultRuns.markedProcesses(run))
                    .as("processes of the launches of " + run)
                    .isEmpty();
        }
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(actual));
    }

    // What a step is, whatever launch found it: its length, its outcome and what the server counted.
    private static List<String> steps(JsonNode doc) {
        List<String> out = new ArrayList<>();
        for (JsonNode s : doc.get("scenarios")) {
            JsonNode v = s.get("verification");
            out.add(s.get("backend").asString() + " " + s.get("target_len").asLong() + " "
                    + s.get("outcome").asString() + " " + s.get("success").asBoolean() + " "
                    + (v == null || v.isNull() ? "-" : v.get("prompt_tokens").asString()));
        }
        return out;
    }

    // The run folder a resume continues: the one with results. A run killed before writing them left a folder
    // without; the next run of the experiment starts afresh and stops what that one left.
    private static Path resumable(Path out) throws IOException {
        for (Path run : runFolders(out)) {
            if (Files.exists(run.resolve("results.json"))) {
                return run;
            }
        }
        return null;
    }

    private static List<Path> runFolders(Path out) throws IOException {
        Path experiment = out.resolve("chaos");
        if (!Files.isDirectory(experiment)) {
            return List.of();
        }
        try (Stream<Path> runs = Files.list(experiment)) {
            return runs.filter(Files::isDirectory).sorted().toList();
        }
    }

    // Where the run was when it was killed, as its folder shows it.
    private static String moment(Path out) throws IOException {
        Path run = resumable(out);
        if (run == null) {
            return runFolders(out).isEmpty() ? "before the run folder" : "before the first save";
        }
        int steps;
        try {
            steps = FaultRuns.results(run).get("scenarios").size();
        } catch (IOException | RuntimeException midWrite) {
            return "while results.json was replaced";
        }
        boolean live = !FaultRuns.pidFileGroups(run).isEmpty();
        return steps + " steps saved" + (live ? ", a server live" : "");
    }
}
