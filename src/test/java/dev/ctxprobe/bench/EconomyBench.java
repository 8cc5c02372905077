package dev.ctxprobe.bench;

import dev.ctxprobe.cli.Main;
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
import java.util.function.IntSupplier;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Exploration cost: launches and wall time to the frontier through the real {@code ctxprobe run} (in this JVM),
 * {@code list} against {@code frontier} with and without capacity hints and {@code restart: on_failure}, on the
 * test engine at the seeds' scale and on the embedded engine (the demo, whose search starts from the predicted
 * frontier or from max).
 */
final class EconomyBench {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String SEED_TARGETS =
            "[65536, 131072, 262144, 393216, 524288, 655360, 786432, 917504, 1048576]";
    private static final String SEED_FRONTIER =
            "  frontier: {min: 65536, max: 1048576, precision: 0.01, align: 256, max_launches: 12}\n";

    private EconomyBench() {}

    /** One run: the sweep section and the backend's engine and test engine arguments. */
    private record Case(String name, String sweep, String engine, String engineArgs) {}

    static List<Figure> run(Bench.Options options) throws Exception {
        Path dir = Files.createTempDirectory("ctxprobe-bench-economy");
        try {
            return runIn(dir, options);
        } finally {
            Bench.deleteTree(dir);
        }
    }

    private static List<Figure> runIn(Path dir, Bench.Options options) throws IOException {
        List<Figure> figures = new ArrayList<>();
        String list = "  strategy: list\n  targets: " + SEED_TARGETS + "\n";
        String frontier = "  strategy: frontier\n" + SEED_FRONTIER;
        String fast = " --prefill-us-per-token 0.01";
        List<Case> cases = List.of(
                new Case("list_vllm", list, "vllm", "--capacity 1000000" + fast),
                new Case("frontier_hint_vllm", frontier, "vllm", "--capacity 1000000" + fast),
                new Case("list_llamacpp", list, "llamacpp", "--mode llamacpp --capacity 500001" + fast),
                new Case("frontier_nohint_llamacpp", frontier, "llamacpp", "--mode llamacpp --capacity 500001" + fast),
                new Case(
                        "on_failure_sglang",
                        frontier + "  restart: on_failure\n",
                        "sglang",
                        "--mode sglang --capacity 1000000" + fast));
        for (Case c : cases) {
            Path exp = testEngineExperiment(dir, c);
            figures.addAll(measure(dir, c.name(), exp, "test-engine"));
        }
        if (options.embedded()) {
            String demo = Files.readString(Path.of("experiments/demo.yaml"));
            String sweep = demo.substring(demo.indexOf("sweep:\n"), demo.indexOf("timeouts:"));
            // The same search from the predicted frontier (the default) and from max, side by side.
            for (String start : List.of("plan", "max")) {
                String name = start.equals("plan") ? "demo_frontier" : "demo_frontier_from_max";
                figures.addAll(measure(
                        dir,
                        name,
                        write(
                                dir,
                                name,
                                demo.replace(
                                        sweep,
                                        "sweep:\n  strategy: frontier\n"
                                                + "  frontier: {min: 4096, max: 65536, precision: 0.01, align: 256,"
                                                + " max_launches: 8, start: " + start + "}\n")),
                        "embedded"));
            }
            figures.addAll(measure(
                    dir,
                    "demo_list",
                    write(
                            dir,
                            "demo_list",
                            demo.replace(
                                    sweep,
                                    "sweep:\n  strategy: list\n" + "  targets: [4096, 8192, 16384, 32768, 65536]\n")),
                    "embedded"));
        }
        return figures;
    }

    private static Path testEngineExperiment(Path dir, Case c) throws IOException {
        String y = "experiment: " + c.name() + "\n"
                + "model: test-model\n"
                + "context_pad: 1024\n"
                + "vars:\n"
                + "  java: '" + TestEngines.javaBin() + "'\n"
                + "  cp: '" + TestEngines.classpath() + "'\n"
                + "load: {output_len: 1, num_prompts: 1, max_concurrency: 1, request_rate: inf, warmup: 0}\n"
                + "sweep:\n" + c.sweep()
                + "timeouts: {startup_s: 60, request_s: 120, shutdown_s: 10}\n"
                + "backends:\n"
                + "  - name: " + c.engine() + "\n"
                + "    engine: " + c.engine() + "\n"
                + "    command: >-\n"
                + "      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --port {port} --max-model-len {max_model_len} " + c.engineArgs() + "\n";
        return write(dir, c.name(), y);
    }

    private static Path write(Path dir, String name, String yaml) throws IOException {
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, yaml.replaceFirst("(?m)^experiment: .*$", "experiment: " + name));
        return file;
    }

    private static List<Figure> measure(Path dir, String name, Path exp, String engine) throws IOException {
        Path out = dir.resolve("out");
        long t0 = System.nanoTime();
        int code = quietly(() -> Main.execute("run", exp.toString(), "--out", out.toString(), "--quiet"));
        double wallS = (System.nanoTime() - t0) / 1e9;
        if (code != 0) {
            throw new IllegalStateException("ctxprobe run " + exp + " exited with " + code);
        }
        JsonNode doc;
        try (Stream<Path> runs = Files.list(out.resolve(name))) {
            doc = JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
        JsonNode frontier = doc.get("frontier").properties().iterator().next().getValue();
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("run", name);
        params.put("engine", engine);
        params.put("max_ok", frontier.get("max_ok_target").asString());
        params.put("min_failed", frontier.get("min_failed_target").asString());
        params.put("scenarios", doc.get("scenarios").size());
        return List.of(
                Bench.emit(new Figure(
                        "economy",
                        "launches",
                        params,
                        Figure.count(frontier.get("launches").asInt()),
                        "",
                        "",
                        null)),
                Bench.emit(new Figure("economy", "wall_s", params, Figure.single(wallS), "s", "", null)));
    }

    /** Runs ctxprobe with its console output discarded, so only the figures are printed. */
    private static int quietly(IntSupplier run) {
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
