package dev.ctxprobe.bench;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code ./ctxprobe run} as a user runs it, for the memory and overhead benchmarks: the checkout's script (its JDK
 * finder, flags and AOT cache) on an experiment whose one backend is the test engine, a separate child process; and
 * what {@code /proc} says about such a process.
 */
final class UserRuns {
    /** The old script's command, before its start-up and footprint flags: the "before" of the side-by-sides. */
    static final List<String> PLAIN_JAVA_FLAGS =
            List.of("--enable-native-access=ALL-UNNAMED", "-Djava.awt.headless=true");

    /** Linux's USER_HZ: {@code /proc/PID/stat} counts start times and CPU in these ticks. */
    static final double MS_PER_TICK = 10;

    private UserRuns() {}

    /** The checkout's {@code ./ctxprobe}; bench/run runs from the checkout's root. */
    static Path script() {
        Path script = Path.of("ctxprobe").toAbsolutePath();
        if (!Files.isExecutable(script)) {
            throw new IllegalStateException("no executable ./ctxprobe in " + script.getParent());
        }
        return script;
    }

    /** The jar {@code ./ctxprobe} runs; build it first (any ./ctxprobe call does). */
    static Path jar() {
        return script().resolveSibling("target/ctxprobe.jar");
    }

    /**
     * Writes an experiment that sends one prompt of {@code target} tokens to the test engine (vLLM mode, a capacity
     * above it, prefill at 0.01 us a token so a 10M-token prompt is answered in 0.1 s).
     */
    static Path experiment(Path dir, String name, long target) throws IOException {
        String yaml = """
                experiment: %s
                model: test-model
                context_pad: 100
                vars:
                  java: '%s'
                  cp: '%s'
                load: {output_len: 1, num_prompts: 1, max_concurrency: 1, request_rate: inf, warmup: 0}
                sweep: {strategy: list, targets: [%d]}
                timeouts: {startup_s: 60, request_s: 300, shutdown_s: 10}
                backends:
                  - name: test
                    engine: vllm
                    command: >-
                      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine
                      --port {port} --max-model-len {max_model_len} --capacity %d --prefill-us-per-token 0.01
                """.formatted(name, TestEngines.javaBin(), TestEngines.classpath(), target, 2 * target + 1000);
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, yaml);
        return file;
    }

    /** Starts {@code argv} with {@code env} added, its output (unread) in {@code log}. */
    static Process start(List<String> argv, Map<String, String> env, Path log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return pb.start();
    }

    /** {@code ./ctxprobe run EXPERIMENT --out OUT}. */
    static List<String> scriptRun(Path experiment, Path out) {
        return List.of(script().toString(), "run", experiment.toString(), "--out", out.toString());
    }

    /** The same run by the old script's command line, without the start-up and footprint flags. */
    static List<String> plainRun(Path experiment, Path out) {
        List<String> argv = new ArrayList<>(List.of(TestEngines.javaBin()));
        argv.addAll(PLAIN_JAVA_FLAGS);
        argv.addAll(List.of("-jar", jar().toString(), "run", experiment.toString(), "--out", out.toString()));
        return argv;
    }

    /** A {@code kB} field of {@code /proc/PID/status} in kB, or -1 once the process is gone or going. */
    static long statusKb(long pid, String field) throws IOException {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/" + pid + "/status"));
        } catch (IOException gone) {
            // Gone (no such file), or exiting while its file is read (ESRCH, "No such process"): callers keep the
            // largest value read, so a read that failed adds nothing.
            return -1;
        }
        for (String line : lines) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(
                        line.substring(field.length() + 1).replace("kB", "").strip());
            }
        }
        return -1;
    }

    /**
     * Fields of {@code /proc/PID/stat} counted from 1 as proc(5) does (14 utime, 15 stime, 22 starttime), or null
     * once the process is gone.
     */
    static long[] stat(long pid, int... fields) throws IOException {
        String s;
        try {
            s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        } catch (IOException gone) {
            return null;
        }
        // The command name (field 2) is in parentheses and may hold spaces; field 3 follows the last ')'.
        String[] rest = s.substring(s.lastIndexOf(')') + 2).split(" ");
        long[] out = new long[fields.length];
        for (int i = 0; i < fields.length; i++) {
            out[i] = Long.parseLong(rest[fields[i] - 3]);
        }
        return out;
    }

    /**
     * The children of {@code pid}, from each of its threads' {@code /proc/PID/task/TID/children}: about 30 small
     * reads for a JVM, where {@link ProcessHandle#children()} reads the stat of every process on the machine (0.8 ms
     * with 65 processes), which polled every few ms took a third of a core from the run being timed.
     */
    static List<Long> children(long pid) {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path task : tasks) {
                for (String child :
                        Files.readString(task.resolve("children")).trim().split(" ")) {
                    if (!child.isEmpty()) {
                        out.add(Long.parseLong(child));
                    }
                }
            }
        } catch (IOException | DirectoryIteratorException gone) {
            // The process or one of its threads ended while being read: what was read so far is all there is.
        }
        return out;
    }

    /** The 1-minute load average. */
    static double load1() throws IOException {
        return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    }
}
