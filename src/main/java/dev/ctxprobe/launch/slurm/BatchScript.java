package dev.ctxprobe.launch.slurm;

import dev.ctxprobe.secrets.Redactor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The batch script of one step's job: the engine runs as one {@code srun} step with one task per node, and each task
 * sends its own output straight into its log in the run folder ({@code srun --output} relays through srun, which is
 * killed at a cancel, so a relayed log loses the engine's last lines). Task 0, on the job's first node, writes the
 * step's log and serves HTTP; task {@code k} writes {@code <log>.rank<k>.log}.
 *
 * <p>Every word of the command is quoted for {@code sh}, so nothing in it is ever interpreted; only the per-node
 * placeholders become the variables Slurm sets in each task: {@code {node_rank}} its {@code SLURM_PROCID}, {@code
 * {nnodes}} {@code SLURM_NTASKS}, {@code {head_host}} the first node of the job.
 */
final class BatchScript {
    /** The placeholders filled in for each node, and {@code dist_port}, one port for the whole job. */
    static final List<String> PLACEHOLDERS = List.of("node_rank", "nnodes", "head_host", "dist_port");

    private static final Pattern PER_NODE = Pattern.compile("\\{(node_rank|nnodes|head_host)}");

    private BatchScript() {}

    /**
     * A batch script and the secrets it reads from its job's environment.
     *
     * @param text the script, which holds no secret value
     * @param secrets what {@code sbatch}'s environment must carry for the script: each {@code CTXPROBE_SECRET_<n>}
     *     variable and the word or value it stands for
     */
    record Written(String text, Map<String, String> secrets) {}

    /** The variables that carry secret words into the job, numbered from 1. */
    static final String SECRET_PREFIX = "CTXPROBE_SECRET_";

    /**
     * @param argv the engine's command; per-node placeholders as written
     * @param log task 0's log, an absolute path on the filesystem the nodes share
     * @param distPort the value of {@code {dist_port}}
     * @param redactor finds the secret values: a word of the command or a value of {@code env} that holds one is not
     *     written into the script, but read from a variable of the job's environment (docs/slurm.md#secrets)
     */
    static Written of(
            String jobName, List<String> argv, Map<String, String> env, Path log, int distPort, Redactor redactor) {
        Map<String, String> secrets = new LinkedHashMap<>();
        StringBuilder task = new StringBuilder();
        String rankLog = rankLogStem(log);
        task.append("if [ \"$SLURM_PROCID\" = 0 ]; then exec >")
                .append(quote(log.toString()))
                .append(" 2>&1; else exec >")
                .append(quote(rankLog + ".rank"))
                .append("\"$SLURM_PROCID\"")
                .append(quote(".log"))
                .append(" 2>&1; fi\n");
        env.forEach((k, v) -> task.append("export ")
                .append(k)
                .append('=')
                .append(redactor.finds(v) ? secret(secrets, v) : quote(v))
                .append('\n'));
        task.append("exec");
        for (String word : argv) {
            String w = word.replace("{dist_port}", Integer.toString(distPort));
            task.append(' ').append(redactor.finds(w) ? secret(secrets, w) : word(w));
        }
        task.append('\n');
        StringBuilder script = new StringBuilder("#!/bin/sh\n")
                .append("# Written by ctxprobe for the job ")
                .append(jobName)
                .append(": the engine runs as one srun step, one task per\n")
                .append(
                        "# node; task 0 (on the first node) serves HTTP. Each task writes its output into its own log.\n");
        if (!secrets.isEmpty()) {
            script.append("# The command's secrets come from the job's environment, never from this file.\n");
            for (String name : secrets.keySet()) {
                script.append("if [ -z \"${")
                        .append(name)
                        .append("+set}\" ]; then echo 'ctxprobe: ")
                        .append(name)
                        .append(" is not in the job'\\''s environment: sbatch --export must pass it (ALL, the")
                        .append(" default)' >&2; exit 1; fi\n");
            }
        }
        script.append("CTXPROBE_HEAD_HOST=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n")
                .append("export CTXPROBE_HEAD_HOST\n")
                .append("exec srun --kill-on-bad-exit=1 /bin/sh -c ")
                .append(quote(task.toString()))
                .append('\n');
        return new Written(script.toString(), secrets);
    }

    // A variable of the job's environment holding `value`, as the task's shell reads it.
    private static String secret(Map<String, String> secrets, String value) {
        String name = SECRET_PREFIX + (secrets.size() + 1);
        secrets.put(name, value);
        return "\"$" + name + "\"";
    }

    /** The log of task {@code rank} (0 writes the step's own log). */
    static Path rankLog(Path log, int rank) {
        return rank == 0 ? log : Path.of(rankLogStem(log) + ".rank" + rank + ".log");
    }

    private static String rankLogStem(Path log) {
        String s = log.toString();
        return s.endsWith(".log") ? s.substring(0, s.length() - 4) : s;
    }

    /** One word for sh: quoted text, with the per-node placeholders as double-quoted variables. */
    static String word(String w) {
        Matcher m = PER_NODE.matcher(w);
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (m.find()) {
            if (m.start() > at) {
                out.append(quote(w.substring(at, m.start())));
            }
            out.append(
                    switch (m.group(1)) {
                        case "node_rank" -> "\"$SLURM_PROCID\"";
                        case "nnodes" -> "\"$SLURM_NTASKS\"";
                        default -> "\"$CTXPROBE_HEAD_HOST\"";
                    });
            at = m.end();
        }
        if (at < w.length() || out.isEmpty()) {
            out.append(quote(w.substring(at)));
        }
        return out.toString();
    }

    /** Single quotes keep everything literal in sh; a single quote itself is closed, escaped and reopened. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
