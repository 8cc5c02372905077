package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.launch.Ledger;
import dev.ctxprobe.testengine.TestEngines;
import dev.ctxprobe.testsupport.SlurmCluster;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Whole runs on a real Slurm cluster (the single-node one {@code .ci/slurm-up} starts) with the test engine as each
 * step's {@code srun} step: the same outcomes as local runs, every fault classified, and no job and no process of a
 * job left behind, whatever ended the run. Skipped, saying why, without a cluster; CI requires one.
 */
class SlurmRunIT {
    private static final String ENGINE = "{java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp}"
            + " dev.ctxprobe.testengine.TestEngine --port {port} --max-model-len {max_model_len}";
    private static final String LOAD =
            "{output_len: 1, num_prompts: 1, max_concurrency: 1, request_rate: 10000, warmup: 0}";

    @TempDir
    Path dir;

    @BeforeAll
    static void cluster() {
        SlurmCluster.assumeAvailable();
    }

    /** One backend of a test experiment: its name, engine profile, its own launcher line (or null) and command. */
    private record Backend(String name, String engine, String launcher, String command) {
        static Backend of(String name, String engineArgs) {
            return new Backend(name, "vllm", null, ENGINE + " " + engineArgs);
        }
    }

    /** An experiment whose backends run the test engine; {@code launcher} is the top-level line, or empty. */
    private Path experiment(String name, String launcher, String sweep, String timeouts, List<Backend> backends)
            throws IOException {
        StringBuilder y = new StringBuilder();
        y.append("experiment: ").append(name).append('\n');
        y.append("model: test-model\n");
        y.append("context_pad: 100\n");
        y.append("vars:\n");
        y.append("  java: '").append(TestEngines.javaBin()).append("'\n");
        y.append("  cp: '").append(TestEngines.classpath()).append("'\n");
        y.append("load: ").append(LOAD).append('\n');
        y.append("sweep: ").append(sweep).append('\n');
        y.append("timeouts: ").append(timeouts).append('\n');
        y.append(launcher).append('\n');
        y.append("backends:\n");
        for (Backend b : backends) {
            y.append("  - name: ").append(b.name()).append('\n');
            y.append("    engine: ").append(b.engine()).append('\n');
            if (b.launcher() != null) {
                y.append("    launcher: ").append(b.launcher()).append('\n');
            }
            y.append("    command: >-\n      ").append(b.command()).append('\n');
        }
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y);
        return file;
    }

    private static final String TIMEOUTS = "{startup_s: 30, request_s: 3, shutdown_s: 5}";

    /**
     * Issue 30: the batch script in logs/ held the real key. A key of the command reaches the engine on the cluster
     * through sbatch's environment (docs/slurm.md#secrets), and no file of the run folder holds it.
     */
    @Test
    void aKeyInTheCommandReachesTheEngineButNotTheBatchScript() throws IOException {
        String key = "sk-slurm-0123456789";
        Path received = dir.resolve("received-keys.txt");
        Path exp = experiment(
                "keyed_slurm",
                "launcher: slurm",
                "{strategy: list, targets: [1000]}",
                TIMEOUTS,
                List.of(Backend.of("e", "--api-key " + key + " --keys-to " + received)));
        Path out = dir.resolve("keyed");
        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString());
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Path runDir = onlyRun(out);
        JsonNode doc = FaultRuns.results(runDir);
        assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("ok");
        assertNoJobLeft(doc);
        assertThat(Files.readString(received)).as("the engine got the key").contains("--api-key " + key);
        List<Path> files;
        try (var walk = Files.walk(runDir)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        assertThat(files).anyMatch(f -> f.getFileName().toString().endsWith(".sbatch.sh"));
        for (Path f : files) {
            assertThat(Files.readString(f)).as(f.toString()).doesNotContain(key);
        }
        assertThat(run.out() + run.err()).doesNotContain(key);
    }

    @Test
    void aListAndAFrontierRunGiveTheSameOutcomesOnTheClusterAsLocally() throws IOException {
        List<Backend> refusing = List.of(Backend.of("e", "--capacity 3000"));
        Path local = experiment("same_local", "", "{strategy: list, targets: [1000, 2500, 4000]}", TIMEOUTS, refusing);
        Path cluster = experiment(
                "same_slurm", "launcher: slurm", "{strategy: list, targets: [1000, 2500, 4000]}", TIMEOUTS, refusing);
        for (String strategy : List.of("list", "frontier")) {
            List<String> steps = new ArrayList<>();
            List<String> answers = new ArrayList<>();
            for (Path file : List.of(local, cluster)) {
                Path out = dir.resolve(strategy + "-" + file.getFileName());
                CliRun run = CliRun.of("run", file.toString(), "--out", out.toString(), "--strategy", strategy);
                assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
                JsonNode doc = FaultRuns.results(onlyRun(out));
                steps.add(outcomes(doc));
                JsonNode f = doc.get("frontier").get("e");
                answers.add(f.get("max_ok_target") + " " + f.get("min_failed_target") + " " + f.get("stopped_because"));
                if (file == cluster) {
                    assertNoJobLeft(doc);
                    for (JsonNode s : doc.get("scenarios")) {
                        assertThat(s.get("server").get("id").asString()).startsWith("slurm:");
                        assertThat(s.get("server").get("queued_s").asDouble()).isPositive();
                    }
                }
            }
            System.out.printf("%s: local %s, slurm %s%n", strategy, steps.get(0), steps.get(1));
            assertThat(steps.get(1)).as(strategy).isEqualTo(steps.get(0));
            assertThat(answers.get(1)).as(strategy).isEqualTo(answers.get(0));
        }
    }

    @Test
    void eachFaultIsClassifiedAndLeavesNoJobAndNoProcess() throws IOException {
        Path file = experiment(
                "faults",
                "launcher: slurm",
                "{strategy: list, targets: [1000]}",
                TIMEOUTS,
                List.of(
                        Backend.of("refuses", "--refuse-at 1100"),
                        Backend.of("crashes", "--fault crash-mid-request"),
                        Backend.of("hangs", "--fault hang-after-headers"),
                        Backend.of("orphans", "--fault leave-orphan"),
                        new Backend(
                                "overfull",
                                "vllm",
                                "{mem: 300M}",
                                ENGINE.replace("{java}", "{java} -Xmx1g") + " --resident-mb 600")));
        Path out = dir.resolve("out");
        CliRun run = CliRun.of("run", file.toString(), "--out", out.toString(), "--parallel", "2");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Path runDir = onlyRun(out);
        JsonNode doc = FaultRuns.results(runDir);
        assertThat(outcomeByBackend(doc))
                .isEqualTo(Map.of(
                        "refuses", "kv_insufficient",
                        "crashes", "server_crash",
                        "hangs", "timeout",
                        "orphans", "ok",
                        "overfull", "oom_startup"));
        JsonNode overfull = scenario(doc, "overfull");
        assertThat(overfull.get("server").get("ended").get("reason").asString()).isEqualTo("out_of_memory");
        assertThat(overfull.get("failure").get("evidence").get(0).asString()).contains("DerivedExitCode 0:125");
        // The orphan left the engine's session: only the job's cgroup reached it.
        Matcher orphan = Pattern.compile("orphan pid (\\d+)")
                .matcher(Files.readString(
                        runDir.resolve(scenario(doc, "orphans").get("log").asString())));
        assertThat(orphan.find()).isTrue();
        FaultRuns.assertProcessGone(Long.parseLong(orphan.group(1)));
        assertNoJobLeft(doc);
        assertThat(Ledger.read(runDir.resolve(Ledger.NAME))).isEmpty();
    }

    @Test
    void aPartitionSetDownGivesTheQueueClassWithinQueueTimePlusFiveSeconds() throws IOException {
        String partition = "ctxprobe-it-" + ProcessHandle.current().pid();
        int queueS = 4;
        slurm("scontrol", "create", "PartitionName=" + partition, "Nodes=localhost", "State=UP");
        try {
            slurm("scontrol", "update", "PartitionName=" + partition, "State=DOWN");
            Path file = experiment(
                    "queued",
                    "launcher: {kind: slurm, partition: " + partition + "}",
                    "{strategy: frontier, frontier: {min: 1000, max: 4000, align: 100}}",
                    "{startup_s: 30, request_s: 3, shutdown_s: 5, queue_s: " + queueS + "}",
                    List.of(Backend.of("e", "")));
            Path out = dir.resolve("out");
            long t0 = System.nanoTime();
            CliRun run = CliRun.of("run", file.toString(), "--out", out.toString());
            double tookS = (System.nanoTime() - t0) / 1e9;
            assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
            JsonNode doc = FaultRuns.results(onlyRun(out));
            System.out.printf(Locale.ROOT, "queue_s %d: the run took %.1f s%n", queueS, tookS);
            assertThat(tookS).isLessThan(queueS + 5);
            JsonNode step = doc.get("scenarios").get(0);
            assertThat(doc.get("scenarios")).hasSize(1);
            assertThat(step.get("outcome").asString()).isEqualTo("queue_timeout");
            assertThat(step.get("failure").get("detail").asString()).contains("PartitionDown");
            assertThat(step.get("server").get("queued_s").asDouble()).isGreaterThanOrEqualTo(queueS);
            assertThat(step.get("server").get("startup_s").isNull()).isTrue();
            // A queue says nothing about length: the search stops, it never concludes that nothing fits.
            assertThat(doc.get("frontier").get("e").get("stopped_because").asString())
                    .isEqualTo("queue_timeout");
            assertNoJobLeft(doc);
        } finally {
            slurm("scontrol", "update", "PartitionName=" + partition, "State=UP");
            slurm("scontrol", "delete", "PartitionName=" + partition);
        }
    }

    /**
     * Issue 32: a job the cluster holds (here submitted with --hold, as an administrator's hold or Slurm's own after a
     * failed launch leaves it) cannot start by itself: a verdict at once, not at queue_s.
     */
    @Test
    void aHeldJobIsAVerdictAtOnceNotAtTheQueueTime() throws IOException {
        Path file = experiment(
                "held",
                "launcher: {kind: slurm, extra_args: [--hold]}",
                "{strategy: list, targets: [1000]}",
                "{startup_s: 600, request_s: 600, shutdown_s: 5, queue_s: 600}",
                List.of(Backend.of("e", "")));
        Path out = dir.resolve("out");
        long t0 = System.nanoTime();
        CliRun run = CliRun.of("run", file.toString(), "--out", out.toString());
        double tookS = (System.nanoTime() - t0) / 1e9;
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode doc = FaultRuns.results(onlyRun(out));
        JsonNode step = doc.get("scenarios").get(0);
        System.out.printf(
                Locale.ROOT,
                "held job: %s after %.1f s of run, verdict_s %s%n",
                step.get("outcome").asString(),
                tookS,
                step.get("failure").get("verdict_s"));
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("cluster_ended");
        assertThat(step.get("failure").get("detail").asString()).contains("JobHeldUser");
        assertThat(step.get("failure").get("verdict_s").asDouble()).isLessThan(5.0);
        assertThat(tookS).isLessThan(30.0);
        assertNoJobLeft(doc);
    }

    @Test
    void ctrlCAndSigkillWithResumeLeaveNoJobBehind() throws IOException, InterruptedException {
        Path hold = dir.resolve("hold");
        Files.createFile(hold);
        Path file = experiment(
                "killed",
                "launcher: slurm",
                "{strategy: list, targets: [1000]}",
                TIMEOUTS.replace("startup_s: 30", "startup_s: 120"),
                List.of(Backend.of("a", "--hold-while " + hold), Backend.of("b", "--hold-while " + hold)));

        // Ctrl-C while two backends' engines load at once: both jobs are cancelled, the run says how to go on.
        Path interruptedOut = dir.resolve("interrupted");
        Process ctrlC = FaultRuns.startCtxprobe(
                dir.resolve("ctrl-c.log"),
                "run",
                file.toString(),
                "--out",
                interruptedOut.toString(),
                "--parallel",
                "2");
        Set<String> jobs = awaitJobsRunning(interruptedOut, "killed", 2);
        FaultRuns.signal(ctrlC.pid(), "INT");
        assertThat(ctrlC.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(ctrlC.exitValue())
                .as(Files.readString(dir.resolve("ctrl-c.log")))
                .isEqualTo(130);
        assertThat(liveJobs(jobs)).isEmpty();
        assertThat(jobProcesses(jobs)).isEmpty();
        assertThat(outcomeByBackend(FaultRuns.results(onlyRun(interruptedOut))))
                .isEqualTo(Map.of("a", "interrupted", "b", "interrupted"));

        // SIGKILL: the jobs outlive ctxprobe, and --resume cancels them before running the steps again.
        Path killedOut = dir.resolve("killed");
        Process killed = FaultRuns.startCtxprobe(
                dir.resolve("kill.log"), "run", file.toString(), "--out", killedOut.toString(), "--parallel", "2");
        Set<String> orphaned = awaitJobsRunning(killedOut, "killed", 2);
        FaultRuns.signal(killed.pid(), "KILL");
        assertThat(killed.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(liveJobs(orphaned)).isEqualTo(orphaned);
        Files.delete(hold);
        Path runDir = onlyRun(killedOut);
        CliRun resumed = CliRun.of("run", "--resume", runDir.toString());
        assertThat(resumed.exitCode()).as(resumed.out() + resumed.err()).isZero();
        for (String job : orphaned) {
            assertThat(resumed.out()).contains("cancelled leftover Slurm job " + job);
        }
        JsonNode doc = FaultRuns.results(runDir);
        assertThat(outcomeByBackend(doc)).isEqualTo(Map.of("a", "ok", "b", "ok"));
        Set<String> ids = jobIds(doc);
        ids.addAll(orphaned);
        assertThat(liveJobs(ids)).isEmpty();
        assertThat(jobProcesses(ids)).isEmpty();
        assertThat(Ledger.read(runDir.resolve(Ledger.NAME))).isEmpty();
    }

    @Test
    void aTwoNodeJobRunsEveryRankServesFromRankZeroAndEndsThemAll() throws IOException {
        // Two tasks on the one node stand in for two nodes: extra_args come last and override ctxprobe's layout.
        Path file = experiment(
                "two_nodes",
                "launcher: {kind: slurm, nodes: 2, extra_args: [--nodes=1, --ntasks-per-node=2]}",
                "{strategy: list, targets: [1000]}",
                TIMEOUTS,
                List.of(new Backend(
                        "sg",
                        "sglang",
                        null,
                        ENGINE + " --mode sglang --node-rank {node_rank} --nnodes {nnodes}"
                                + " --dist-init-addr {head_host}:{dist_port}")));
        Path out = dir.resolve("out");
        CliRun run = CliRun.of("run", file.toString(), "--out", out.toString());
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Path runDir = onlyRun(out);
        JsonNode doc = FaultRuns.results(runDir);
        assertThat(outcomes(doc)).isEqualTo("1000:ok");
        String head = Files.readString(runDir.resolve("logs/sg_ctx_1000.log"));
        String worker = Files.readString(runDir.resolve("logs/sg_ctx_1000.rank1.log"));
        assertThat(head)
                .contains("rank 0: rank 1 of 2 joined")
                .contains("rank 0 of 2: serving a completion of 1000 prompt tokens")
                .contains("Received SIGTERM");
        assertThat(worker)
                .contains("rank 1 of 2: connected to the head at localhost:")
                .contains("Received SIGTERM");
        assertThat(worker).doesNotContain("serving a completion");
        assertNoJobLeft(doc);
    }

    /**
     * A benchmark more than a test: two backends explored one after the other, then two at once, on the cluster.
     * The outcomes must be the same; the ratio of wall times is printed, not asserted (it depends on the machine).
     */
    @Test
    void twoBackendsInParallelTakeAboutHalfTheSerialTimeWithTheSameOutcomes() throws IOException {
        Path file = experiment(
                "parallel",
                "launcher: slurm",
                "{strategy: list, targets: [1000, 2000]}",
                TIMEOUTS,
                List.of(Backend.of("a", "--startup-ms 1500"), Backend.of("b", "--startup-ms 1500")));
        Map<String, Double> seconds = new LinkedHashMap<>();
        Map<String, Map<String, String>> outcomes = new LinkedHashMap<>();
        for (String parallel : List.of("1", "2")) {
            Path out = dir.resolve("parallel-" + parallel);
            long t0 = System.nanoTime();
            CliRun run = CliRun.of("run", file.toString(), "--out", out.toString(), "--parallel", parallel);
            seconds.put(parallel, (System.nanoTime() - t0) / 1e9);
            assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
            JsonNode doc = FaultRuns.results(onlyRun(out));
            outcomes.put(parallel, stepsByBackend(doc));
            assertNoJobLeft(doc);
        }
        System.out.printf(
                Locale.ROOT,
                "parallel: serial %.1f s, --parallel 2 %.1f s, ratio %.2f%n",
                seconds.get("1"),
                seconds.get("2"),
                seconds.get("2") / seconds.get("1"));
        assertThat(outcomes.get("2")).isEqualTo(outcomes.get("1"));
        assertThat(outcomes.get("1")).containsEntry("a", "1000:ok 2000:ok").containsEntry("b", "1000:ok 2000:ok");
    }

    /** Waits until the run's servers file names {@code count} Slurm jobs and Slurm runs them; their ids. */
    private static Set<String> awaitJobsRunning(Path out, String experiment, int count) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            var run = FaultRuns.runDir(out, experiment);
            if (run.isPresent()) {
                Set<String> running = new LinkedHashSet<>();
                List<String> queue = slurm("squeue", "-h", "-o", "%i %T")
                        .lines()
                        .map(String::strip)
                        .toList();
                for (Ledger.Entry e : Ledger.read(run.get().resolve(Ledger.NAME))) {
                    if (e.kind().equals("slurm") && queue.contains(e.fields().getFirst() + " RUNNING")) {
                        running.add(e.fields().getFirst());
                    }
                }
                if (running.size() == count) {
                    return running;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not " + count + " Slurm jobs of " + experiment + " running within 60 s");
    }

    private static void assertNoJobLeft(JsonNode doc) {
        Set<String> ids = jobIds(doc);
        assertThat(ids).isNotEmpty();
        assertThat(liveJobs(ids)).as("jobs still in the queue").isEmpty();
        assertThat(jobProcesses(ids)).as("processes of the jobs").isEmpty();
    }

    private static Set<String> jobIds(JsonNode doc) {
        Set<String> ids = new LinkedHashSet<>();
        for (JsonNode s : doc.get("scenarios")) {
            JsonNode server = s.get("server");
            if (server != null
                    && server.hasNonNull("id")
                    && server.get("id").asString().startsWith("slurm:")) {
                ids.add(server.get("id").asString().substring("slurm:".length()));
            }
        }
        return ids;
    }

    /** Those of the jobs that squeue still lists (pending, running or completing): its plain view hides ended jobs. */
    private static Set<String> liveJobs(Set<String> ids) {
        Set<String> live = new LinkedHashSet<>();
        for (String line : slurm("squeue", "-h", "-o", "%i").lines().toList()) {
            if (ids.contains(line.strip())) {
                live.add(line.strip());
            }
        }
        return live;
    }

    /** Processes on this machine (the cluster's only node) that belong to one of the jobs, by their environment. */
    private static List<Long> jobProcesses(Set<String> ids) {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(
                Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path p : procs) {
                byte[] environ;
                try {
                    environ = Files.readAllBytes(p.resolve("environ"));
                } catch (IOException gone) {
                    continue;
                }
                for (String var : new String(environ, StandardCharsets.UTF_8).split("\0")) {
                    if (var.startsWith("SLURM_JOB_ID=") && ids.contains(var.substring("SLURM_JOB_ID=".length()))) {
                        pids.add(Long.parseLong(p.getFileName().toString()));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pids;
    }

    private static String outcomes(JsonNode doc) {
        List<String> steps = new ArrayList<>();
        for (JsonNode s : doc.get("scenarios")) {
            steps.add(s.get("target_len").asLong() + ":" + s.get("outcome").asString());
        }
        return String.join(" ", steps);
    }

    private static Map<String, String> outcomeByBackend(JsonNode doc) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode s : doc.get("scenarios")) {
            out.put(s.get("backend").asString(), s.get("outcome").asString());
        }
        return out;
    }

    private static Map<String, String> stepsByBackend(JsonNode doc) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode s : doc.get("scenarios")) {
            out.merge(
                    s.get("backend").asString(),
                    s.get("target_len").asLong() + ":" + s.get("outcome").asString(),
                    (a, b) -> a + " " + b);
        }
        return out;
    }

    private static JsonNode scenario(JsonNode doc, String backend) {
        for (JsonNode s : doc.get("scenarios")) {
            if (s.get("backend").asString().equals(backend)) {
                return s;
            }
        }
        throw new AssertionError("no step of " + backend);
    }

    private static Path onlyRun(Path out) throws IOException {
        try (Stream<Path> experiments = Files.list(out)) {
            Path experimentDir = experiments.findFirst().orElseThrow();
            try (Stream<Path> runs = Files.list(experimentDir)) {
                return runs.filter(Files::isDirectory).findFirst().orElseThrow();
            }
        }
    }

    /** Runs a Slurm command, failing the test when it fails; its output. */
    private static String slurm(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            String output;
            try (InputStream in = p.getInputStream()) {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            assertThat(p.waitFor(30, TimeUnit.SECONDS))
                    .as(String.join(" ", argv))
                    .isTrue();
            assertThat(p.exitValue()).as(String.join(" ", argv) + ": " + output).isZero();
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
