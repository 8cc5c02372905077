package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import dev.ctxprobe.launch.ProcessGroups;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Spec 07: a run killed with SIGKILL mid-step is finished by {@code --resume}; a broken results file is refused. */
class ResumeIT {
    private static final Path H200_SEED = FaultRuns.h200Seed();
    private static final List<Long> TARGETS = List.of(500L, 1000L, 1500L);

    @TempDir
    Path dir;

    private Process ctxprobe;
    private final List<Long> groups = new ArrayList<>();

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        for (long g : groups) {
            if (!ProcessGroups.members(g).isEmpty()) {
                ProcessGroups.signal(g, "KILL");
            }
        }
    }

    @Test
    void resumeContinuesTheStrategyAndBackendsTheRunWasStartedWith() throws Exception {
        Path exp = FaultRuns.write(
                dir, "chosen", TARGETS, 0, List.of(new Backend("first", null, ""), new Backend("second", null, "")));
        Path out = dir.resolve("out");
        CliRun first = CliRun.of(
                "run", exp.toString(), "--out", out.toString(), "--backend", "second", "--strategy", "frontier");
        assertThat(first.exitCode()).as(first.err()).isZero();
        Path runDir = FaultRuns.runDir(out, "chosen").orElseThrow();
        JsonNode before = FaultRuns.results(runDir);
        int steps = before.get("scenarios").size();

        CliRun resumed = CliRun.of("run", "--resume", runDir.toString());

        assertThat(resumed.exitCode()).as(resumed.err()).isZero();
        JsonNode after = FaultRuns.results(runDir);
        assertThat(after.get("scenarios")).as("nothing left to run").hasSize(steps);
        // issue 31: a finished run resumed moved its finished_at and said nothing.
        assertThat(resumed.out())
                .contains("nothing left to run: every step of " + runDir + " was done when it finished at "
                        + before.get("metadata").get("finished_at").asString() + "; its results are unchanged");
        assertThat(after.get("metadata").get("finished_at"))
                .isEqualTo(before.get("metadata").get("finished_at"));
        assertThat(after.get("config").get("strategy").asString()).isEqualTo("frontier");
        for (JsonNode s : after.get("scenarios")) {
            assertThat(s.get("backend").asString()).isEqualTo("second");
        }
    }

    @Test
    void aRunKilledMidStepIsFinishedByResumeWithoutRepeatingFinishedSteps() throws Exception {
        // Each request takes about 1 ms a token of simulated prefill, so the second step is still running when killed.
        Path exp = FaultRuns.write(
                dir, "resume", TARGETS, 0, List.of(new Backend("engine", null, "--prefill-us-per-token 1000")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());
        Reader reader = new Reader(out, topLevelKeys());
        Thread reading = Thread.ofPlatform().daemon().start(reader);

        long leftover;
        Path runDir;
        try {
            leftover = awaitSecondStepServer(out);
            groups.add(leftover);
            runDir = FaultRuns.runDir(out, "resume").orElseThrow();
            FaultRuns.signal(ctxprobe.pid(), "KILL");
            assertThat(ctxprobe.waitFor(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            reader.stop = true;
            reading.join();
        }
        assertThat(reader.failure)
                .as("a read of results.json while the run wrote it")
                .isNull();
        assertThat(reader.reads.get())
                .as("reads of results.json during the run")
                .isGreaterThan(3);
        assertThat(ProcessGroups.members(leftover))
                .as("the killed run left its server")
                .isNotEmpty();
        assertThat(FaultRuns.pidFileGroups(runDir)).contains(leftover);
        JsonNode before = FaultRuns.results(runDir);
        assertThat(before.get("scenarios")).hasSize(1);
        long firstServer =
                before.get("scenarios").get(0).get("server").get("pid").asLong();

        CliRun resumed = CliRun.of("run", "--resume", runDir.toString(), "--quiet");

        assertThat(resumed.exitCode()).as(resumed.out() + resumed.err()).isZero();
        assertThat(resumed.out() + resumed.err()).contains("stopped leftover server group " + leftover);
        FaultRuns.assertGroupsGone(List.of(leftover));
        JsonNode after = FaultRuns.results(runDir);
        groups.addAll(FaultRuns.serverGroups(after));
        Map<Long, JsonNode> byTarget = new TreeMap<>();
        after.get("scenarios").forEach(s -> byTarget.put(s.get("target_len").asLong(), s));
        assertThat(byTarget.get(500L).get("server").get("pid").asLong())
                .as("the finished step is kept, not run again")
                .isEqualTo(firstServer);
        assertThat(byTarget.values())
                .allSatisfy(s -> assertThat(s.get("outcome").asString()).isEqualTo("ok"));
        assertThat(after.get("metadata").get("finished_at").isNull()).isFalse();
        assertThat(after.get("frontier").get("engine").get("max_ok_target").asLong())
                .isEqualTo(1500);
        FaultRuns.assertGroupsGone(FaultRuns.serverGroups(after));
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();

        Path fresh = dir.resolve("fresh");
        CliRun whole = CliRun.of("run", exp.toString(), "--out", fresh.toString(), "--quiet");
        assertThat(whole.exitCode()).as(whole.out() + whole.err()).isZero();
        JsonNode uninterrupted =
                FaultRuns.results(FaultRuns.runDir(fresh, "resume").orElseThrow());
        groups.addAll(FaultRuns.serverGroups(uninterrupted));
        assertThat(steps(after)).isEqualTo(steps(uninterrupted)).hasSize(TARGETS.size());
        JsonNode resumedFrontier = after.get("frontier").get("engine");
        JsonNode wholeFrontier = uninterrupted.get("frontier").get("engine");
        for (String key : List.of("max_ok_target", "min_failed_target", "launches")) {
            assertThat(resumedFrontier.get(key)).as(key).isEqualTo(wholeFrontier.get(key));
        }
    }

    @Test
    void aTruncatedResultsFileIsAClearErrorWithExit2() throws Exception {
        Path runDir = brokenRunDir();
        String seed = Files.readString(H200_SEED);
        Files.writeString(runDir.resolve("results.json"), seed.substring(0, seed.length() / 2));

        CliRun run = CliRun.of("run", "--resume", runDir.toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err())
                .contains(runDir.resolve("results.json").toString())
                .contains("line ")
                .contains("truncated");
        assertNothingLaunched(runDir);
    }

    @Test
    void aHandBrokenResultsFileIsAClearErrorWithExit2() throws Exception {
        Path runDir = brokenRunDir();
        Files.writeString(runDir.resolve("results.json"), "{\"metadata\": {\"experiment\": \"x\"}, \"scenarios\": 3}");

        CliRun run = CliRun.of("run", "--resume", runDir.toString());

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains(runDir.resolve("results.json").toString());
        assertNothingLaunched(runDir);
    }

    private Path brokenRunDir() throws IOException {
        Path exp = FaultRuns.write(dir, "broken", TARGETS, 0, List.of(new Backend("engine", null, "")));
        Path runDir = dir.resolve("out/broken/run1");
        Files.createDirectories(runDir);
        Files.copy(exp, runDir.resolve("experiment.yaml"));
        return runDir;
    }

    private static void assertNothingLaunched(Path runDir) {
        assertThat(runDir.resolve("logs")).doesNotExist();
        assertThat(runDir.resolve("servers.pid")).doesNotExist();
    }

    private long awaitSecondStepServer(Path out) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Path runDir = FaultRuns.runDir(out, "resume").orElse(null);
            Path log = runDir == null ? null : runDir.resolve("logs/engine_ctx_1000.log");
            if (log != null
                    && Files.exists(log)
                    && Files.readString(log).contains("Application startup complete.")
                    && !FaultRuns.pidFileGroups(runDir).isEmpty()) {
                return FaultRuns.pidFileGroups(runDir).getLast();
            }
            assertThat(ctxprobe.isAlive()).as("ctxprobe is still running").isTrue();
            Thread.sleep(20);
        }
        throw new AssertionError("the second step's server did not come up");
    }

    private static Set<String> steps(JsonNode doc) {
        Set<String> steps = new TreeSet<>();
        doc.get("scenarios").forEach(s -> steps.add(s.get("backend").asString() + "@" + s.get("target_len")));
        return steps;
    }

    private static Set<String> topLevelKeys() throws IOException {
        Set<String> keys = new TreeSet<>();
        for (Iterator<String> it = FaultRuns.JSON
                        .readTree(H200_SEED.toFile())
                        .propertyNames()
                        .iterator();
                it.hasNext(); ) {
            keys.add(it.next());
        }
        return keys;
    }

    /** Reads results.json over and over while the run writes it; each read must be whole, valid JSON. */
    static final class Reader implements Runnable {
        private final Path out;
        private final Set<String> keys;
        final AtomicInteger reads = new AtomicInteger();
        volatile boolean stop;
        volatile String failure;

        Reader(Path out, Set<String> keys) {
            this.out = out;
            this.keys = keys;
        }

        @Override
        public void run() {
            while (!stop && failure == null) {
                Path file = FaultRuns.runDir(out, "resume")
                        .map(d -> d.resolve("results.json"))
                        .orElse(null);
                if (file != null && Files.exists(file)) {
                    try {
                        JsonNode doc = FaultRuns.JSON.readTree(Files.readAllBytes(file));
                        Set<String> missing = new TreeSet<>(keys);
                        doc.propertyNames().forEach(missing::remove);
                        if (!missing.isEmpty()) {
                            failure = "read " + reads.get() + " lacks " + missing;
                        }
                        reads.incrementAndGet();
                    } catch (IOException | RuntimeException e) {
                        failure = "read " + reads.get() + ": " + e;
                    }
                }
                Thread.onSpinWait();
            }
        }
    }
}
