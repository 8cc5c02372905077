package dev.ctxprobe.launch.slurm;

import java.nio.file.Path;
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
     * @param argv the engine's command; per-node placeholders as written
     * @param log task 0's log, an absolute path on the filesystem the nodes share
     * @param distPort the value of {@code {dist_port}}
     */
    static String of(String jobName, List<String> argv, Map<String, String> env, Path log, int distPort) {
        StringBuilder task = new StringBuilder();
        String rankLog = rankLogStem(log);
        task.append("if [ \"$SLURM_PROCID\" = 0 ]; then exec >")
                .append(quote(log.toString()))
                .append(" 2>&1; else exec >")
                .append(quote(rankLog + ".rank"))
                .append("\"$SLURM_PROCID\"")
                .append(quote(".log"))
                .append(" 2>&1; fi\n");
        env.forEach((k, v) ->
                task.append("export ").append(k).append('=').append(quote(v)).append('\n'));
        task.append("exec");
        for (String word : argv) {
            task.append(' ').append(word(word.replace("{dist_port}", Integer.toString(distPort))));
        }
        task.append('\n');
        return "#!/bin/sh\n"
                + "# Written by ctxprobe for the job " + jobName + ": the engine runs as one srun step, one task per\n"
                + "# node; task 0 (on the first node) serves HTTP. Each task writes its output into its own log.\n"
                + "CTXPROBE_HEAD_HOST=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
                + "export CTXPROBE_HEAD_HOST\n"
                + "exec srun --kill-on-bad-exit=1 /bin/sh -c " + quote(task.toString()) + "\n";
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
