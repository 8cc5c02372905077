package dev.ctxprobe.launch.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The batch script run by a real {@code sh} with {@code srun} stood in by a script that runs the task the way srun
 * does on each node: every word reaches the engine exactly, per-node placeholders become each task's values, and
 * each task writes its own log.
 */
class BatchScriptTest {
    @TempDir
    Path dir;

    @Test
    void everyWordArrivesExactlyAndEachRankGetsItsOwnValuesAndLog() throws IOException, InterruptedException {
        Path log = dir.resolve("logs/b_ctx_1000.log");
        Files.createDirectories(log.getParent());
        List<String> argv = List.of(
                "printf",
                "%s|\\n",
                "it's \"quoted\" $HOME `id` ; rm -rf /",
                "--node-rank={node_rank}",
                "{nnodes}",
                "{head_host}:{dist_port}",
                "",
                "{{literal}}");
        run(BatchScript.of("job", argv, Map.of(), log, 29500, Redactor.NONE));

        List<String> expected = new ArrayList<>(List.of(
                "it's \"quoted\" $HOME `id` ; rm -rf /|", "--node-rank=0|", "2|", "gpu01:29500|", "|", "{{literal}}|"));
        assertThat(Files.readAllLines(log)).containsExactlyElementsOf(expected);
        expected.set(1, "--node-rank=1|");
        assertThat(Files.readAllLines(BatchScript.rankLog(log, 1))).containsExactlyElementsOf(expected);
    }

    @Test
    void theEnvironmentIsExportedToTheEngine() throws IOException, InterruptedException {
        Path log = dir.resolve("e.log");
        run(BatchScript.of(
                "job", List.of("sh", "-c", "echo \"$EXTRA\""), Map.of("EXTRA", "a b'c $HOME"), log, 1, Redactor.NONE));
        assertThat(Files.readString(log)).isEqualTo("a b'c $HOME\n");
    }

    @Test
    void secretsAreReadFromTheJobsEnvironmentNeverWrittenInTheScript() throws IOException, InterruptedException {
        String key = "sk-live-0123456789";
        String token = "hf_abcdefghij";
        Redactor redactor =
                Redactor.of(Set.of(), List.of(Map.of("HF_TOKEN", token))).with(List.of(key));
        Path log = dir.resolve("s.log");
        BatchScript.Written batch = BatchScript.of(
                "job",
                List.of(
                        "sh",
                        "-c",
                        "printf '%s|' \"$@\" \"$HF_TOKEN\"",
                        "engine",
                        "--api-key",
                        key,
                        "--api-key=" + key,
                        "--port={dist_port}"),
                Map.of("HF_TOKEN", token),
                log,
                7,
                redactor);
        assertThat(batch.text()).doesNotContain(key).doesNotContain(token).doesNotContain("0123456789");
        assertThat(batch.secrets()).containsValues(key, "--api-key=" + key, token);

        run(batch);
        assertThat(Files.readString(log))
                .as("the engine gets the real values")
                .isEqualTo("--api-key|" + key + "|--api-key=" + key + "|--port=7|" + token + "|");
    }

    @Test
    void aJobWithoutTheSecretsInItsEnvironmentStopsAndSaysWhy() throws IOException, InterruptedException {
        Redactor redactor = Redactor.NONE.with(List.of("sk-live-0123456789"));
        BatchScript.Written batch = BatchScript.of(
                "job",
                List.of("engine", "--api-key", "sk-live-0123456789"),
                Map.of(),
                dir.resolve("n.log"),
                7,
                redactor);
        String out = start(batch.text(), Map.of());
        assertThat(out)
                .contains("ctxprobe: CTXPROBE_SECRET_1 is not in the job's environment: sbatch --export must pass it");
    }

    private void run(BatchScript.Written batch) throws IOException, InterruptedException {
        String out = start(batch.text(), batch.secrets());
        assertThat(exit).as(out).isZero();
    }

    private int exit = -1;

    // srun, on a machine without Slurm: runs the task (the argument after -c) once per rank, as each node would.
    private String start(String script, Map<String, String> jobEnv) throws IOException, InterruptedException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path srun = bin.resolve("srun");
        Files.writeString(
                srun, "#!/bin/sh\nshift 1\nfor r in 0 1; do SLURM_PROCID=$r SLURM_NTASKS=2 \"$@\" || exit $?; done\n");
        Path scontrol = bin.resolve("scontrol");
        Files.writeString(scontrol, "#!/bin/sh\necho gpu01\necho gpu02\n");
        assertThat(srun.toFile().setExecutable(true) && scontrol.toFile().setExecutable(true))
                .isTrue();
        Path file = dir.resolve("job.sh");
        Files.writeString(file, script);
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", file.toString()).redirectErrorStream(true);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("SLURM_JOB_NODELIST", "gpu[01-02]");
        pb.environment().putAll(jobEnv);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        exit = p.waitFor();
        return out;
    }
}
