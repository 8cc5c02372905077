package dev.ctxprobe.bench;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.LocalLauncher;
import dev.ctxprobe.launch.Ports;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.testengine.TestEngine;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Per-step overhead outside the engine, with the real {@link LocalLauncher}: preflight (the port check and the
 * accelerator memory query a step makes before launching), the launch call itself, the delay between the server
 * being ready (its own stamp) and the launcher noticing, and teardown (stop of the whole group). Then, as a user
 * runs it, the time from the exec of {@code ./ctxprobe run} to the start of the engine's process, and the JDK
 * finder the scripts source.
 */
final class OverheadBench {

    /** Spec 07: per-step overhead target. */
    static final double BAR_MS = 1000;

    /** Issue 17: a ready server is seen within 100 ms (p50). */
    static final double READY_BAR_MS = 100;

    /** Issue 17: from the exec of ./ctxprobe to the first launch at most 0.5 s (p50) on a warm machine. */
    static final double START_BAR_MS = 500;

    /**
     * When the ready server binds, after its JVM is up: inside the launcher's first seconds of fast polling, and past
     * them, where only the ready line (or the next slow poll) tells the launcher.
     */
    private static final long EARLY_MS = 300;

    private static final long LATE_MS = LocalLauncher.FAST_WINDOW.toMillis() + 200;

    private OverheadBench() {}

    static List<Figure> run(Bench.Options options) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("ctxprobe-bench-overhead");
        try {
            return runIn(dir, options);
        } finally {
            Bench.deleteTree(dir);
        }
    }

    private static List<Figure> runIn(Path dir, Bench.Options options) throws IOException, InterruptedException {
        LocalLauncher launcher = new LocalLauncher(null, null);
        HardwareProbe hardware = HardwareProbe.system();
        List<Double> preflight = new ArrayList<>();
        List<Double> launch = new ArrayList<>();
        Map<String, List<Double>> detect = new LinkedHashMap<>();
        List<Double> stop = new ArrayList<>();
        List<Double> stopEngine = new ArrayList<>();
        double load = UserRuns.load1();
        int n = 0;
        for (int i = 0; i < options.reps(); i++) {
            for (ReadyCase c : READY_CASES) {
                long t0 = System.nanoTime();
                int port = Ports.free();
                boolean busy = Ports.busy("127.0.0.1", port);
                hardware.memoryUsed();
                preflight.add((System.nanoTime() - t0) / 1e6);
                if (busy) {
                    throw new IllegalStateException("port " + port + " was taken right after it was found free");
                }
                Path stamp = dir.resolve("ready-" + n);
                List<String> argv = List.of(
                        TestEngines.javaBin(),
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        TestEngines.classpath(),
                        ReadyServer.class.getName(),
                        Integer.toString(port),
                        stamp.toString(),
                        Long.toString(c.bindAfterMs()),
                        c.line() ? "line" : "quiet");
                long t1 = System.nanoTime();
                ServerHandle handle = launcher.launch(spec(argv, dir.resolve("ready-" + n + ".log"), port));
                launch.add((System.nanoTime() - t1) / 1e6);
                n++;
                try {
                    Readiness ready = handle.awaitReady();
                    long noticed = System.nanoTime();
                    if (!(ready instanceof Readiness.Ready)) {
                        throw new IllegalStateException("the ready server was not seen ready: " + ready);
                    }
                    detect.computeIfAbsent(c.what(), k -> new ArrayList<>()).add((noticed - stampOf(stamp)) / 1e6);
                } finally {
                    stop.add(stopped(handle));
                }
            }
            stopEngine.add(stopTestEngine(launcher, dir.resolve("engine-" + i + ".log")));
        }
        List<Figure> figures = new ArrayList<>();
        figures.add(figure("preflight_ms", "ctxprobe port check + accelerator query", preflight, BAR_MS, load));
        figures.add(figure("launch_call_ms", "LocalLauncher.launch (setsid, own group)", launch, BAR_MS, load));
        detect.forEach((what, samples) -> figures.add(p50Figure(
                "ready_seen_ms", "launcher sees ready - server stamp; " + what, samples, READY_BAR_MS, load)));
        figures.add(figure("teardown_ms", "stop() of ReadyServer group", stop, BAR_MS, load));
        figures.add(figure("teardown_ms", "stop() of test engine (vllm mode) group", stopEngine, BAR_MS, load));
        figures.addAll(startToLaunch(dir, options.reps()));
        figures.addAll(jdkFinder(options.reps()));
        return figures;
    }

    /** The ready server's stamp, which it may write a moment after the launcher has seen it ready. */
    private static long stampOf(Path stamp) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(stamp)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the ready server wrote no stamp to " + stamp);
            }
            Thread.sleep(1);
        }
        return Long.parseLong(Files.readString(stamp).strip());
    }

    /** How the ready server comes up: when it binds after its JVM starts, and whether it prints a ready line. */
    private record ReadyCase(String what, long bindAfterMs, boolean line) {}

    private static final List<ReadyCase> READY_CASES = List.of(
            new ReadyCase("binds " + EARLY_MS + " ms after start (fast polling)", EARLY_MS, false),
            new ReadyCase("binds " + LATE_MS + " ms after start, prints uvicorn's ready line", LATE_MS, true),
            new ReadyCase("binds " + LATE_MS + " ms after start, no ready line (100 ms polls)", LATE_MS, false));

    /**
     * From the exec of {@code ./ctxprobe run} to the start of the test engine's process, both from the kernel's
     * start times ({@code /proc/PID/stat}, 10 ms ticks), and ctxprobe's CPU until then; the script, the script with
     * its AOT cache off, and the old script's command line, alternating.
     */
    private static List<Figure> startToLaunch(Path dir, int reps) throws IOException, InterruptedException {
        Path exp = UserRuns.experiment(dir, "overhead", 1000);
        Path out = dir.resolve("out");
        // Builds the jar and the AOT cache if they are not there, so no run below pays for them.
        UserRuns.start(List.of(UserRuns.script().toString(), "--version"), Map.of(), dir.resolve("v.log"))
                .waitFor();
        Map<String, List<String>> argv = new LinkedHashMap<>();
        Map<String, Map<String, String>> env = new LinkedHashMap<>();
        argv.put("./ctxprobe run", UserRuns.scriptRun(exp, out));
        env.put("./ctxprobe run", Map.of());
        argv.put("./ctxprobe run, AOT cache off", UserRuns.scriptRun(exp, out));
        env.put("./ctxprobe run, AOT cache off", Map.of("CTXPROBE_JAVA_OPTS", "-XX:AOTMode=off"));
        argv.put("java -jar (old script's flags)", UserRuns.plainRun(exp, out));
        env.put("java -jar (old script's flags)", Map.of());
        Map<String, List<Double>> wall = new LinkedHashMap<>();
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        double load = UserRuns.load1();
        for (int i = 0; i < reps; i++) {
            for (String how : argv.keySet()) {
                double[] got = firstLaunch(how, argv.get(how), env.get(how), dir.resolve("run.log"));
                wall.computeIfAbsent(how, k -> new ArrayList<>()).add(got[0]);
                cpu.computeIfAbsent(how, k -> new ArrayList<>()).add(got[1]);
            }
        }
        List<Figure> figures = new ArrayList<>();
        for (String how : argv.keySet()) {
            figures.add(p50Figure("start_to_launch_ms", how, wall.get(how), START_BAR_MS, load));
            figures.add(p50Figure("cpu_to_launch_ms", how + " (ctxprobe's user+sys CPU)", cpu.get(how), 0, load));
        }
        return figures;
    }

    /** {milliseconds from exec to the engine's start, ctxprobe's CPU milliseconds until it was seen}. */
    private static double[] firstLaunch(String how, List<String> argv, Map<String, String> env, Path log)
            throws IOException, InterruptedException {
        Process run = UserRuns.start(argv, env, log);
        long[] started = UserRuns.stat(run.pid(), 22);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        double[] got = null;
        try {
            while (got == null && run.isAlive() && System.nanoTime() < deadline) {
                for (long child : UserRuns.children(run.pid())) {
                    long[] engine = engineStart(child);
                    long[] cpu = UserRuns.stat(run.pid(), 14, 15);
                    if (engine != null && cpu != null && started != null) {
                        got = new double[] {
                            (engine[0] - started[0]) * UserRuns.MS_PER_TICK, (cpu[0] + cpu[1]) * UserRuns.MS_PER_TICK
                        };
                    }
                }
                Thread.sleep(2);
            }
            if (!run.waitFor(2, TimeUnit.MINUTES) || run.exitValue() != 0 || got == null) {
                throw new IllegalStateException(
                        how + " did not launch the test engine and finish: " + Files.readString(log));
            }
        } finally {
            run.destroyForcibly();
        }
        return got;
    }

    /** The start time of the test engine's process, once {@code pid} has become it (setsid, then java). */
    private static long[] engineStart(long pid) throws IOException {
        byte[] cmdline;
        try {
            cmdline = Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline"));
        } catch (IOException gone) {
            return null;
        }
        return new String(cmdline, StandardCharsets.ISO_8859_1).contains(TestEngine.class.getName())
                ? UserRuns.stat(pid, 22)
                : null;
    }

    /** The JDK finder the scripts source, against one java version query (what it ran per candidate before). */
    private static List<Figure> jdkFinder(int reps) throws IOException, InterruptedException {
        Path finder = UserRuns.script().resolveSibling(".mvn/find-jdk.sh");
        List<String> sourced = List.of("sh", "-c", ". '" + finder + "' && ctxprobe_find_jdk");
        List<String> query = List.of(TestEngines.javaBin(), "-XshowSettings:properties", "-version");
        List<Double> found = new ArrayList<>();
        List<Double> asked = new ArrayList<>();
        double load = UserRuns.load1();
        for (int i = 0; i < Math.max(reps, 10); i++) {
            found.add(timed(sourced));
            asked.add(timed(query));
        }
        return List.of(
                p50Figure("jdk_finder_ms", "sh: . .mvn/find-jdk.sh; ctxprobe_find_jdk", found, 0, load),
                p50Figure(
                        "jdk_finder_ms",
                        "one java -XshowSettings:properties -version (per candidate before)",
                        asked,
                        0,
                        load));
    }

    private static double timed(List<String> argv) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(1, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(argv + " failed");
        }
        return (System.nanoTime() - t0) / 1e6;
    }

    private static LaunchSpec spec(List<String> argv, Path log, int port) {
        return new LaunchSpec(
                "bench",
                argv,
                Map.of(),
                log,
                "127.0.0.1",
                port,
                "/health",
                Engines.profile("vllm").readyLines(),
                Duration.ofSeconds(60),
                Duration.ofSeconds(10),
                LaunchSpec.NO_QUEUE);
    }

    private static double stopped(ServerHandle handle) {
        StopReport report = handle.stop();
        if (!report.stoppedCleanly() || !report.leftoverPids().isEmpty()) {
            throw new IllegalStateException("the server's group did not stop cleanly: " + report);
        }
        return report.took().toNanos() / 1e6;
    }

    private static double stopTestEngine(LocalLauncher launcher, Path log) throws IOException, InterruptedException {
        int port = Ports.free();
        List<String> argv = new ArrayList<>(TestEngines.command("--port", Integer.toString(port), "--startup-ms", "0"));
        argv.addAll(1, List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        ServerHandle handle = launcher.launch(spec(argv, log, port));
        Readiness ready;
        try {
            ready = handle.awaitReady();
        } catch (InterruptedException e) {
            handle.stop();
            throw e;
        }
        double took = stopped(handle);
        if (!(ready instanceof Readiness.Ready)) {
            throw new IllegalStateException("the test engine did not become ready (" + ready + "); see " + log);
        }
        return took;
    }

    private static Figure figure(String name, String what, List<Double> samples, double barMs, double load) {
        Map<String, Number> values =
                Figure.spread(samples.stream().mapToDouble(Double::doubleValue).toArray());
        boolean meets = values.get("max").doubleValue() < barMs;
        return Bench.emit(
                new Figure("overhead", name, params(what, load), values, "ms", "max < " + (long) barMs + " ms", meets));
    }

    /** A figure whose bar is on its median; {@code barMs} 0 for a figure shown for comparison, with no bar. */
    private static Figure p50Figure(String name, String what, List<Double> samples, double barMs, double load) {
        Map<String, Number> values =
                Figure.spread(samples.stream().mapToDouble(Double::doubleValue).toArray());
        return Bench.emit(new Figure(
                "overhead",
                name,
                params(what, load),
                values,
                "ms",
                barMs > 0 ? "p50 <= " + (long) barMs + " ms" : "",
                barMs > 0 ? values.get("p50").doubleValue() <= barMs : null));
    }

    private static Map<String, Object> params(String what, double load) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("what", what);
        params.put("load1_at_start", load);
        return params;
    }
}
