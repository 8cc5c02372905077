package dev.ctxprobe.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * ctxprobe's memory as a user runs it: {@code ./ctxprobe run} of one prompt (128k, 1M, 4M, 10M tokens) to the test
 * engine (a separate child process, whose memory is not counted), its peak resident set ({@code VmHWM}) read from
 * {@code /proc/PID/status} every 5 ms until it exits (the peak only grows, so the last read is the peak but for what
 * the last 5 ms added). Each size runs the script, then the old script's command line (java -jar without the
 * start-up and footprint flags), alternating, on the same build; {@code --xmx} adds the script with that heap.
 * Last, at 128k, the same reading of {@link LibraryFloor}: what the run's chosen libraries take with none of
 * ctxprobe's own work, with the chart and without it.
 */
final class MemoryBench {

    private static final long[] TOKENS = {128_000, 1_000_000, 4_000_000, 10_000_000};

    /** Issue 17: at most these MB at 128k, 1M, 4M and 10M tokens. */
    private static final long[] BAR_MB = {64, 110, 200, 400};

    private MemoryBench() {}

    static List<Figure> run(Bench.Options options) throws Exception {
        Path dir = Files.createTempDirectory("ctxprobe-bench-memory");
        try {
            return runIn(dir, options);
        } finally {
            Bench.deleteTree(dir);
        }
    }

    private static List<Figure> runIn(Path dir, Bench.Options options) throws IOException, InterruptedException {
        // Builds the jar and the AOT cache if they are not there, so no run below pays for them.
        int code = UserRuns.start(List.of(UserRuns.script().toString(), "--version"), Map.of(), dir.resolve("v.log"))
                .waitFor();
        if (code != 0) {
            throw new IllegalStateException("./ctxprobe --version failed; see " + dir.resolve("v.log"));
        }
        List<Figure> figures = new ArrayList<>();
        for (int i = 0; i < TOKENS.length; i++) {
            long tokens = TOKENS[i];
            Path exp = UserRuns.experiment(dir, "memory" + tokens, tokens);
            Path out = dir.resolve("out");
            figures.add(measure("./ctxprobe run", UserRuns.scriptRun(exp, out), Map.of(), dir, tokens, BAR_MB[i]));
            figures.add(measure(
                    "java -jar (old script's flags)", UserRuns.plainRun(exp, out), Map.of(), dir, tokens, BAR_MB[i]));
            if (options.xmx() != null) {
                figures.add(measure(
                        "./ctxprobe run, CTXPROBE_JAVA_OPTS=-Xmx" + options.xmx(),
                        UserRuns.scriptRun(exp, out),
                        Map.of("CTXPROBE_JAVA_OPTS", "-Xmx" + options.xmx()),
                        dir,
                        tokens,
                        BAR_MB[i]));
            }
        }
        figures.add(floor(
                "the chosen libraries alone: picocli, Jackson streaming, one JFreeChart SVG, the body",
                dir,
                TOKENS[0],
                true));
        figures.add(floor("the same without the chart", dir, TOKENS[0], false));
        return figures;
    }

    private static Figure measure(
            String how, List<String> argv, Map<String, String> env, Path dir, long tokens, long barMb)
            throws IOException, InterruptedException {
        Path log = dir.resolve("run.log");
        double load = UserRuns.load1();
        Peak peak = peak(how + " with " + tokens + " tokens", argv, env, log);
        if (peak.exit() != 0 || !peak.said().contains(" ok ")) {
            throw new IllegalStateException(
                    how + " with " + tokens + " tokens did not measure an ok step: " + peak.said());
        }
        return figure(how, tokens, barMb, peak, load);
    }

    /**
     * The chosen libraries alone ({@link LibraryFloor}) with the script's flags on the bench's class path: the JDK's
     * class-data archive, no AOT cache (a class path with folders cannot have one; ctxprobe's own run peaked within
     * 1 MB with its cache and without).
     */
    private static Figure floor(String how, Path dir, long tokens, boolean chart)
            throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(TimingBench.java());
        argv.addAll(List.of(LibraryFloor.class.getName(), Long.toString(tokens)));
        if (chart) {
            argv.add("chart");
        }
        double load = UserRuns.load1();
        Peak peak = peak(how, argv, Map.of(), dir.resolve("floor.log"));
        if (peak.exit() != 0 || !peak.said().contains("floor: ")) {
            throw new IllegalStateException(how + " failed: " + peak.said());
        }
        // Not ctxprobe: no verdict of its own; the figure is read against the bar of the ctxprobe row above it.
        return figure(how, tokens, 0, peak, load);
    }

    private record Peak(double mb, double wallS, int exit, String said) {}

    /** Runs {@code argv} to its end, reading its {@code VmHWM} every 5 ms. */
    private static Peak peak(String what, List<String> argv, Map<String, String> env, Path log)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Process run = UserRuns.start(argv, env, log);
        long peakKb = 0;
        try {
            while (run.isAlive()) {
                peakKb = Math.max(peakKb, UserRuns.statusKb(run.pid(), "VmHWM"));
                if (run.waitFor(5, TimeUnit.MILLISECONDS)) {
                    break;
                }
                if (System.nanoTime() - t0 > TimeUnit.MINUTES.toNanos(10)) {
                    throw new IllegalStateException(what + " ran over 10 minutes");
                }
            }
        } finally {
            run.destroyForcibly();
        }
        return new Peak(peakKb / 1024.0, (System.nanoTime() - t0) / 1e9, run.waitFor(), Files.readString(log));
    }

    private static Figure figure(String how, long tokens, long barMb, Peak peak, double load) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("prompt_tokens", Bench.tokenLabel(tokens));
        params.put("command", how);
        params.put("wall_s", Figure.round(peak.wallS()));
        params.put("load1", load);
        return Bench.emit(new Figure(
                "memory",
                "peak_rss_mb",
                params,
                Figure.single(peak.mb()),
                "MB",
                barMb > 0 ? "<= " + barMb + " MB" : "",
                barMb > 0 ? peak.mb() <= barMb : null));
    }
}
