package dev.ctxprobe.bench;

import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.LocalLauncher;
import dev.ctxprobe.launch.Ports;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-step overhead outside the engine, with the real {@link LocalLauncher}: preflight (the port check and the
 * accelerator memory query a step makes before launching), the launch call itself, the delay between the server
 * being ready (its own stamp) and the launcher noticing, and teardown (stop of the whole group).
 */
final class OverheadBench {

    /** Spec 07: per-step overhead target. */
    static final double BAR_MS = 1000;

    /** Spec 07: readiness is polled at most every 250 ms, so a ready server is noticed within that. */
    static final double POLL_BAR_MS = 250;

    private static final long STARTUP_MS = 500;

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
        List<Double> detect = new ArrayList<>();
        List<Double> stop = new ArrayList<>();
        List<Double> stopEngine = new ArrayList<>();
        for (int i = 0; i < options.reps(); i++) {
            long t0 = System.nanoTime();
            int port = Ports.free();
            boolean busy = Ports.busy("127.0.0.1", port);
            hardware.memoryUsed();
            preflight.add((System.nanoTime() - t0) / 1e6);
            if (busy) {
                throw new IllegalStateException("port " + port + " was taken right after it was found free");
            }
            Path stamp = dir.resolve("ready-" + i);
            List<String> argv = List.of(
                    TestEngines.javaBin(),
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    TestEngines.classpath(),
                    ReadyServer.class.getName(),
                    Integer.toString(port),
                    stamp.toString(),
                    Long.toString(STARTUP_MS));
            long t1 = System.nanoTime();
            ServerHandle handle = launcher.launch(spec(argv, dir.resolve("ready-" + i + ".log"), port));
            launch.add((System.nanoTime() - t1) / 1e6);
            try {
                Readiness ready = handle.awaitReady();
                long noticed = System.nanoTime();
                if (!(ready instanceof Readiness.Ready)) {
                    throw new IllegalStateException("the ready server was not seen ready: " + ready);
                }
                detect.add((noticed - Long.parseLong(Files.readString(stamp).strip())) / 1e6);
            } finally {
                stop.add(stopped(handle));
            }
            stopEngine.add(stopTestEngine(launcher, dir.resolve("engine-" + i + ".log")));
        }
        List<Figure> figures = new ArrayList<>();
        figures.add(figure("preflight_ms", "ctxprobe port check + accelerator query", preflight, BAR_MS));
        figures.add(figure("launch_call_ms", "LocalLauncher.launch (setsid, own group)", launch, BAR_MS));
        figures.add(figure("ready_detect_ms", "launcher sees ready - server stamp", detect, POLL_BAR_MS));
        figures.add(figure("teardown_ms", "stop() of ReadyServer group", stop, BAR_MS));
        figures.add(figure("teardown_ms", "stop() of test engine (vllm mode) group", stopEngine, BAR_MS));
        return figures;
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
                Duration.ofSeconds(60),
                Duration.ofSeconds(10));
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

    private static Figure figure(String name, String what, List<Double> samples, double barMs) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("what", what);
        Map<String, Number> values =
                Figure.spread(samples.stream().mapToDouble(Double::doubleValue).toArray());
        boolean meets = values.get("max").doubleValue() < barMs;
        return Bench.emit(new Figure("overhead", name, params, values, "ms", "max < " + (long) barMs + " ms", meets));
    }
}
