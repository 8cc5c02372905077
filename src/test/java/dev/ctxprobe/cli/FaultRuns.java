package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.launch.Ledger;
import dev.ctxprobe.launch.ProcessGroups;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Experiments with the short timeouts of the fault tests, and the run folder and process-table checks they share. */
final class FaultRuns {
    static final JsonMapper JSON = JsonMapper.builder().build();

    static final int STARTUP_S = 5;
    static final int REQUEST_S = 3;
    static final int SHUTDOWN_S = 2;

    /** Signal n is bit n-1 of the masks in {@code /proc/PID/status}; SIGINT is 2. */
    private static final long SIGINT_BIT = 1L << 1;
    /** SIGHUP is signal 1. */
    private static final long SIGHUP_BIT = 1L;

    private FaultRuns() {}

    /** A seed file by name, from the repository's {@code seeds/} folder. */
    static Path seed(String name) {
        return Path.of("seeds").resolve(name);
    }

    static Path h200Seed() {
        return seed("dsv4_h200_max_context_length.json");
    }

    /** One test-engine backend: its name, a fixed port or null for a free one, and the engine's arguments. */
    record Backend(String name, Integer port, String engineArgs) {}

    /** Writes a list experiment over {@code targets} with the backends in order and one request per step. */
    static Path write(Path dir, String name, List<Long> targets, int warmup, List<Backend> backends)
            throws IOException {
        return TestExperiments.write(
                dir,
                name,
                "  strategy: list\n  targets: " + targets + "\n",
                "  output_len: 1\n  num_prompts: 1\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: " + warmup
                        + "\n",
                "{startup_s: " + STARTUP_S + ", request_s: " + REQUEST_S + ", shutdown_s: " + SHUTDOWN_S + "}",
                backends.stream()
                        .map(b -> new TestExperiments.Backend(b.name(), "vllm", b.port(), b.engineArgs()))
                        .toList());
    }

    /**
     * As {@link #write(Path, String, List, int, List)} with its own timeouts (flow-style YAML) and more top-level
     * YAML ({@code extra}: limits, secrets, pass_env).
     */
    static Path write(
            Path dir,
            String name,
            List<Long> targets,
            int warmup,
            String timeouts,
            String extra,
            List<Backend> backends)
            throws IOException {
        return TestExperiments.write(
                dir,
                name,
                "  strategy: list\n  targets: " + targets + "\n",
                "  output_len: 1\n  num_prompts: 1\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: " + warmup
                        + "\n",
                timeouts,
                extra,
                backends.stream()
                        .map(b -> new TestExperiments.Backend(b.name(), "vllm", b.port(), b.engineArgs()))
                        .toList());
    }

    /** The single run folder under {@code out/<experiment>/}, if it exists yet. */
    static Optional<Path> runDir(Path out, String experiment) {
        Path experimentDir = out.resolve(experiment);
        if (!Files.isDirectory(experimentDir)) {
            return Optional.empty();
        }
        try (Stream<Path> runs = Files.list(experimentDir)) {
            return runs.filter(Files::isDirectory).findFirst();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Starts {@code ctxprobe ARGS} as a real child process, with its output in {@code log}. */
    static Process startCtxprobe(Path log, String... args) throws IOException {
        return startCtxprobe(log, Map.of(), List.of(), args);
    }

    /**
     * Starts {@code ctxprobe ARGS} as a real child process with more environment variables and JVM options.
     *
     * @param jvm JVM options before the class path, e.g. {@code -Xmx64m}
     */
    static Process startCtxprobe(Path log, Map<String, String> env, List<String> jvm, String... args)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(ctxprobeArgv(jvm, args))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(env);
        return pb.start();
    }

    /** The argv of {@code ctxprobe ARGS} run by the tests' java with the tests' class path. */
    static List<String> ctxprobeArgv(List<String> jvm, String... args) {
        List<String> argv = new ArrayList<>(List.of(
                TestEngines.javaBin(),
                "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"));
        argv.addAll(jvm);
        argv.addAll(List.of("-cp", TestEngines.classpath(), Main.class.getName()));
        argv.addAll(List.of(args));
        return argv;
    }

    /**
     * The pids of live processes that carry a launch mark of the run folder {@code runDir} (its name is the first
     * part of every mark), whatever their group or session.
     */
    static List<Long> markedProcesses(Path runDir) {
        String prefix = "CTXPROBE_LAUNCH=" + runDir.getFileName() + ".";
        List<Long> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.toList()) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                byte[] env;
                try {
                    env = Files.readAllBytes(p.resolve("environ"));
                    String stat = Files.readString(p.resolve("stat"));
                    if (stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z")) {
                        continue;
                    }
                } catch (IOException | RuntimeException gone) {
                    continue;
                }
                for (String entry : new String(env, java.nio.charset.StandardCharsets.UTF_8).split("\0")) {
                    if (entry.startsWith(prefix)) {
                        found.add(Long.parseLong(name));
                        break;
                    }
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return found;
    }

    /**
     * Kills every process carrying a launch mark of any run folder under {@code out} ({@code out/<experiment>/<run>}):
     * what a test's SIGKILLed ctxprobe left when the test failed before a resume could stop it.
     */
    static void killMarked(Path out) {
        if (!Files.isDirectory(out)) {
            return;
        }
        try (Stream<Path> experiments = Files.list(out)) {
            for (Path experiment : experiments.filter(Files::isDirectory).toList()) {
                try (Stream<Path> runs = Files.list(experiment)) {
                    for (Path run : runs.filter(Files::isDirectory).toList()) {
                        markedProcesses(run).forEach(pid -> ProcessGroups.signalProcess(pid, true));
                    }
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The peak resident memory of a live process in MiB (VmHWM), or -1 once it is gone. */
    static long peakRssMib(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
                }
            }
        } catch (IOException | RuntimeException gone) {
            return -1;
        }
        return -1;
    }

    /**
     * Sends a signal (INT, TERM, HUP, KILL) to one process by its pid. A SIGINT or SIGHUP that the process ignores
     * fails here, with the cause (see {@link #requireHandled}).
     */
    static void signal(long pid, String signal) throws IOException, InterruptedException {
        if (signal.equals("INT") || signal.equals("HUP")) {
            requireHandled(pid, signal);
        }
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .inheritIO()
                .start();
        assertThat(kill.waitFor()).as("kill -%s %d", signal, pid).isZero();
    }

    /**
     * Fails, with the cause, when process {@code pid} ignores {@code signal} (INT or HUP). A shell that starts the
     * tests in the background ({@code ./mvnw verify &} in a script) starts them with SIGINT ignored, nohup with
     * SIGHUP ignored; every child inherits that, and the JVM then installs no handler for it, as nohup asks. Each
     * Ctrl-C or hang-up test would otherwise fail later as a run that finished with 0 instead of 130 or 129.
     */
    static void requireHandled(long pid, String signal) throws IOException {
        long bit = signal.equals("INT") ? SIGINT_BIT : SIGHUP_BIT;
        if (ignores(pid, bit)) {
            throw new AssertionError("process " + pid + " ignores SIG" + signal + ", inherited from the shell that"
                    + " started the tests (in the background, or under nohup); run ./mvnw verify in the foreground"
                    + " (or from a shell with job control, set -m) and without nohup so that it can be tested");
        }
    }

    /** Whether {@code /proc/PID/status} lists the signal of {@code bit} among the process's ignored signals. */
    private static boolean ignores(long pid, long bit) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("SigIgn:")) {
                long ignored = Long.parseUnsignedLong(
                        line.substring("SigIgn:".length()).strip(), 16);
                return (ignored & bit) != 0;
            }
        }
        return false;
    }

    /**
     * Waits until a server of the run is ready (its log says so) and returns its process group from
     * {@code servers.pid}; fails after {@code limitS} seconds.
     */
    static long awaitServerUp(Path out, String experiment, String readyLine, int limitS)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limitS * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            Optional<Path> runDir = runDir(out, experiment);
            if (runDir.isPresent() && Files.exists(runDir.get().resolve("servers.pid"))) {
                List<Long> groups = pidFileGroups(runDir.get());
                if (!groups.isEmpty() && logSays(runDir.get().resolve("logs"), readyLine)) {
                    return groups.getLast();
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no server of " + experiment + " became ready within " + limitS + " s");
    }

    private static boolean logSays(Path logs, String line) throws IOException {
        if (!Files.isDirectory(logs)) {
            return false;
        }
        try (Stream<Path> files = Files.list(logs)) {
            for (Path f : files.toList()) {
                if (Files.readString(f).contains(line)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The process groups that a run folder's {@code servers.pid} names. */
    static List<Long> pidFileGroups(Path runDir) {
        return Ledger.read(runDir.resolve(Ledger.NAME)).stream()
                .filter(e -> e.kind().equals("local"))
                .map(e -> Long.parseLong(e.fields().getFirst()))
                .toList();
    }

    static JsonNode results(Path runDir) throws IOException {
        return JSON.readTree(runDir.resolve("results.json").toFile());
    }

    /** The process groups of every launched step of the document. */
    static List<Long> serverGroups(JsonNode doc) {
        List<Long> groups = new ArrayList<>();
        for (JsonNode s : doc.get("scenarios")) {
            JsonNode server = s.get("server");
            if (server != null && server.hasNonNull("pid")) {
                groups.add(server.get("pid").asLong());
            }
        }
        return groups;
    }

    /** No process of any of the groups is in the process table. */
    static void assertGroupsGone(List<Long> groups) {
        for (long pgid : groups) {
            assertThat(ProcessGroups.members(pgid))
                    .as("processes of server group %d", pgid)
                    .isEmpty();
        }
    }

    /** The process has exited: it is not in the process table, or only as a zombie (which holds nothing). */
    static void assertProcessGone(long pid) {
        String state;
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            state = stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
        } catch (IOException gone) {
            state = "gone";
        }
        assertThat(state).as("state of process %d", pid).isIn("gone", "Z", "X");
    }
}
