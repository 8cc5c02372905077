package dev.ctxprobe.bench;

import dev.ctxprobe.cli.Main;
import dev.ctxprobe.metrics.Percentiles;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Issue 32's fault suite: per fault injected by the test engine, the seconds from the cause to the step's verdict
 * ({@code failure.verdict_s}) through the real {@code ctxprobe run} (in this JVM), against the startup timeout the
 * step used to wait for; and the p95 over the suite, past the fault's own bound (the grace, the stall time).
 */
final class FaultsBench {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final int STARTUP_S = 600;
    private static final int REQUEST_S = 600;
    private static final int GRACE_S = 5;
    private static final int STALL_S = 10;
    private static final int PROGRESS_S = 5;

    private FaultsBench() {}

    /**
     * A fault: its name, the test engine's flags, the bound the verdict waits for by design, and the timeout the
     * step used to wait for instead.
     */
    private record Fault(String name, String flags, int boundS, int usedToTakeS) {}

    static List<Figure> run(Bench.Options options) throws Exception {
        Path dir = Files.createTempDirectory("ctxprobe-bench-faults");
        try {
            return runIn(dir, options);
        } finally {
            Bench.deleteTree(dir);
        }
    }

    private static List<Figure> runIn(Path dir, Bench.Options options) throws IOException {
        List<Fault> faults = List.of(
                new Fault("fatal_line_then_hang", "--fault fatal-then-hang", GRACE_S, STARTUP_S),
                new Fault("silent_stall", "--fault silent-stall", STALL_S, STARTUP_S),
                // A prompt at the capacity the server states, admitted and never scheduled.
                new Fault(
                        "hang_at_capacity_with_progress_metrics",
                        "--fault hang-at-capacity --capacity {max_model_len}",
                        PROGRESS_S,
                        REQUEST_S));
        List<Long> targets = new ArrayList<>();
        for (int i = 0; i < options.reps(); i++) {
            // Near 20,000 the prompt and its output token lie within 0.5% of a capacity of target + pad (100).
            targets.add(20_000L + i);
        }
        StringBuilder y = new StringBuilder("experiment: faults\n"
                + "model: test-model\n"
                + "context_pad: 100\n"
                + "vars:\n"
                + "  java: '" + TestEngines.javaBin() + "'\n"
                + "  cp: '" + TestEngines.classpath() + "'\n"
                + "load: {output_len: 1, num_prompts: 1, max_concurrency: 1, request_rate: inf, warmup: 0}\n"
                + "sweep: {strategy: list, targets: " + targets + "}\n"
                + "timeouts: {startup_s: " + STARTUP_S + ", request_s: " + REQUEST_S
                + ", shutdown_s: 5, fatal_grace_s: "
                + GRACE_S + ", stall_s: " + STALL_S + ", progress_s: " + PROGRESS_S + "}\n"
                + "backends:\n");
        for (Fault f : faults) {
            y.append("  - name: ")
                    .append(f.name())
                    .append("\n    engine: vllm\n    command: >-\n")
                    .append("      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp}"
                            + " dev.ctxprobe.testengine.TestEngine --port {port} --max-model-len {max_model_len} ")
                    .append(f.flags())
                    .append('\n');
        }
        Path exp = dir.resolve("faults.yaml");
        Files.writeString(exp, y.toString());
        Path out = dir.resolve("out");
        int code = quietly(() -> Main.execute("run", exp.toString(), "--out", out.toString(), "--quiet"));
        if (code != 0) {
            throw new IllegalStateException("ctxprobe run " + exp + " exited with " + code);
        }
        JsonNode doc;
        try (Stream<Path> runs = Files.list(out.resolve("faults"))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        List<Figure> figures = new ArrayList<>();
        List<Double> past = new ArrayList<>();
        for (Fault f : faults) {
            List<Double> verdicts = new ArrayList<>();
            for (JsonNode s : doc.get("scenarios")) {
                JsonNode failure = s.get("failure");
                if (s.get("backend").asString().equals(f.name()) && failure != null && failure.has("verdict_s")) {
                    double v = failure.get("verdict_s").asDouble();
                    verdicts.add(v);
                    past.add(v - f.boundS());
                }
            }
            if (verdicts.size() != options.reps()) {
                throw new IllegalStateException(f.name() + ": " + verdicts.size() + " of " + options.reps()
                        + " steps reached a verdict before the timeout");
            }
            Map<String, Object> params = new LinkedHashMap<>();
            params.put("fault", f.name());
            params.put("bound_s", f.boundS());
            params.put("used_to_take_s", f.usedToTakeS());
            figures.add(Bench.emit(new Figure(
                    "faults",
                    "cause_to_verdict",
                    params,
                    spread(verdicts),
                    "s",
                    "at most 30 s from the cause",
                    max(verdicts) <= 30)));
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("faults", faults.size());
        params.put("grace_s", GRACE_S);
        params.put("stall_s", STALL_S);
        params.put("progress_s", PROGRESS_S);
        double p95 =
                Percentiles.of(past.stream().mapToDouble(Double::doubleValue).toArray(), 95);
        figures.add(Bench.emit(new Figure(
                "faults", "past_bound_p95", params, Figure.single(p95), "s", "at most 5 s past the grace", p95 <= 5)));
        return figures;
    }

    private static Map<String, Number> spread(List<Double> samples) {
        double[] a = samples.stream().mapToDouble(Double::doubleValue).toArray();
        Map<String, Number> v = new LinkedHashMap<>();
        v.put("p50", Figure.round(Percentiles.of(a, 50)));
        v.put("p95", Figure.round(Percentiles.of(a, 95)));
        v.put("max", Figure.round(Percentiles.of(a, 100)));
        v.put("n", a.length);
        return v;
    }

    private static double max(List<Double> samples) {
        return samples.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    /** Runs ctxprobe with its console output discarded, so only the figures are printed. */
    private static int quietly(java.util.function.IntSupplier run) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        try (PrintStream sink = new PrintStream(OutputStream.nullOutputStream())) {
            System.setOut(sink);
            System.setErr(sink);
            return run.getAsInt();
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }
}
