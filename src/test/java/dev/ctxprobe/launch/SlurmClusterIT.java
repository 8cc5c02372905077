package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ctxprobe.testsupport.SlurmCluster;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One tiny job on a real cluster, read through {@code squeue --json} and {@code scontrol show job -o} while it runs and
 * after a cancel: the facts the fixtures in {@code dev/ctxprobe/launch/slurm} record for a Slurm launcher to parse.
 */
class SlurmClusterIT {
    private static final String FIXTURES = "/dev/ctxprobe/launch/slurm/";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration SLURM_COMMAND = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private String jobId;

    @BeforeAll
    static void cluster() {
        SlurmCluster.assumeAvailable();
    }

    @AfterEach
    void cancelIfStillThere() {
        if (jobId != null) {
            run("scancel", jobId);
        }
    }

    @Test
    void aRunningJobIsCancelledAndLeavesTheQueueWhileTheControllerStillKnowsItsEnd() throws IOException {
        Result submitted = run(
                "sbatch",
                "--parsable",
                "--job-name=ctxprobe-it",
                "--output=" + dir.resolve("batch.out"),
                "--wrap",
                "srun --output=" + dir.resolve("step.%t") + " sleep 300");
        assertThat(submitted.exit()).as(submitted.output()).isZero();
        // --parsable prints "ID" (or "ID;CLUSTER" on a federation), nothing else.
        jobId = submitted.output().strip();
        assertThat(jobId).matches("\\d+");

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> "RUNNING".equals(scontrol(jobId).get("JobState")));
        Map<String, String> running = scontrol(jobId);
        assertThat(running)
                .containsEntry("JobId", jobId)
                .containsEntry("JobName", "ctxprobe-it")
                .containsEntry("Reason", "None")
                .containsEntry("ExitCode", "0:0")
                .containsEntry("NodeList", "localhost")
                .containsEntry("BatchHost", "localhost");
        // EndTime and TimeLimit of a running job depend on which scheduler started it (see the fixtures' README).
        assertThat(running.get("Scheduler")).isIn("Main", "Backfill");
        assertThat(running.keySet()).isEqualTo(fixtureKeys("scontrol-running.txt"));

        JsonNode runningJob = squeueJob(jobId);
        assertThat(runningJob.get("job_state").asString()).isEqualTo("RUNNING");
        assertThat(runningJob.get("state_reason").asString()).isEqualTo("None");
        assertThat(runningJob.get("nodes").asString()).isEqualTo("localhost");
        assertThat(runningJob.get("job_resources").get("nodes").asString()).isEqualTo("localhost");
        assertThat(runningJob.get("exit_code").asInt()).isZero();
        JsonNode fixtureJob = fixtureJob("squeue-running.json", "running");
        assertThat(runningJob.propertyNames()).containsExactlyElementsOf(fixtureJob.propertyNames());

        Result cancel = run("scancel", jobId);
        assertThat(cancel.exit()).as(cancel.output()).isZero();
        // COMPLETING lasts while the step's processes are being killed; CANCELLED means they are gone.
        List<String> seen = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    seen.add(scontrol(jobId).get("JobState"));
                    return seen.getLast().equals("CANCELLED");
                });
        assertThat(seen).isSubsetOf("RUNNING", "COMPLETING", "CANCELLED");
        assertThat(scontrol(jobId))
                .containsEntry("Reason", "None")
                .containsEntry("ExitCode", "0:15")
                .containsEntry("NodeList", "localhost");
        JsonNode cancelledJob = squeueJob(jobId);
        assertThat(cancelledJob.get("job_state").asString()).isEqualTo("CANCELLED");
        // A raw wait status: the batch step ended by signal 15.
        assertThat(cancelledJob.get("exit_code").asInt()).isEqualTo(15);

        // squeue's own view drops an ended job at once (silently, exit 0), scontrol and --json keep it for MinJobAge.
        Result queue = run("squeue", "--noheader", "--jobs=" + jobId, "--format=%i %T");
        assertThat(queue.exit()).as(queue.output()).isZero();
        assertThat(queue.output()).isEmpty();
    }

    /** {@code scontrol show job -o ID} as key=value pairs (its keys never hold spaces; our job's values neither). */
    private static Map<String, String> scontrol(String id) {
        Result shown = run("scontrol", "show", "job", "-o", id);
        assertThat(shown.exit()).as(shown.output()).isZero();
        return keyValues(shown.output());
    }

    private static Map<String, String> keyValues(String line) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String word : line.strip().split(" ")) {
            int eq = word.indexOf('=');
            fields.put(word.substring(0, eq), word.substring(eq + 1));
        }
        return fields;
    }

    /** The job's entry in {@code squeue --json}, which lists every job the controller holds whatever -j says. */
    private static JsonNode squeueJob(String id) {
        Result listed = run("squeue", "--json");
        assertThat(listed.exit()).as(listed.output()).isZero();
        JsonNode document = JSON.readTree(listed.output());
        assertThat(document.get("errors")).isEmpty();
        return jobIn(document, job -> job.get("job_id").asLong() == Long.parseLong(id));
    }

    private static JsonNode fixtureJob(String fixture, String name) throws IOException {
        return jobIn(
                JSON.readTree(fixture(fixture)),
                job -> job.get("name").asString().equals(name));
    }

    private static JsonNode jobIn(JsonNode document, Predicate<JsonNode> which) {
        for (JsonNode job : document.get("jobs")) {
            if (which.test(job)) {
                return job;
            }
        }
        throw new AssertionError("no such job in " + document.get("jobs").size() + " jobs");
    }

    private static Set<String> fixtureKeys(String fixture) throws IOException {
        return new LinkedHashSet<>(keyValues(fixture(fixture)).keySet());
    }

    private static String fixture(String name) throws IOException {
        try (InputStream in = SlurmClusterIT.class.getResourceAsStream(FIXTURES + name)) {
            assertThat(in).as(FIXTURES + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private record Result(int exit, String output) {}

    /** Runs a Slurm command with stderr folded into the output, so a failed assertion shows what it said. */
    private static Result run(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
                try (InputStream in = p.getInputStream()) {
                    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            if (!p.waitFor(SLURM_COMMAND.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError(String.join(" ", argv) + " did not finish within " + SLURM_COMMAND);
            }
            return new Result(p.exitValue(), output.join());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
