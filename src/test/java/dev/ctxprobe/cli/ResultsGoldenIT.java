package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.ResultFiles;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;

/**
 * What {@code ctxprobe run} writes stays what it wrote when the golden files were recorded: only keys are added
 * (docs/results.md, "results.json at a glance"), and only the keys of {@link #ADDITIVE_KEYS}. Two small real runs,
 * a demo on the embedded engine and a stand-in for vLLM and SGLang on the test engine, are normalized (the values
 * that differ from run to run or machine to machine are replaced, see {@link #VARIES}, {@link #MACHINE} and
 * {@link #strings}) and compared key by key with {@code src/test/resources/dev/ctxprobe/results/golden}. The same
 * files keep the seeds' keys and read back through ctxprobe's reader and writer unchanged.
 *
 * <p>After an intended change to results.json, re-record with {@code -Dctxprobe.updateResultsGolden=true} and review
 * the diff (the golden folder's README says when).
 */
class ResultsGoldenIT {
    /**
     * The keys the multi-dimension redesign adds to results.json, as generic paths (array items {@code []}, a
     * frontier's backend {@code <backend>}): the schema version, and the point a step measured (its concurrent
     * requests and its cell's parameters); the prefill floor's (docs/results.md, % of roofline); and the pass-key
     * check's answer beside the served one. A fresh file may have these where the golden file lacks them; any other
     * new key fails.
     */
    private static final Set<String> ADDITIVE_KEYS = Set.of(
            "metadata.schema_version",
            "scenarios[].concurrency",
            "scenarios[].params",
            "frontier.<backend>.params",
            // Issue 27: a step against its prefill floor, the floor beside the prediction, cached prompt tokens.
            "scenarios[].roofline",
            "scenarios[].requests[].cached_tokens",
            "frontier.<backend>.predicted.prefill_floor",
            // The pass-key check (docs/results.md#answer), written only for a backend with check: passkey.
            "scenarios[].answer",
            "scenarios[].passkey_ms",
            "frontier.<backend>.correct",
            // Issue 29: the cap YaRN raises and the build the server runs, as llama.cpp states them.
            "scenarios[].server.capacity.capped_at",
            "scenarios[].server.capacity.build",
            // Issue 32: the fast verdicts' limits, and how long after its cause a verdict came.
            "config.timeouts.fatal_grace_s",
            "config.timeouts.stall_s",
            "config.timeouts.progress_s",
            "scenarios[].failure.verdict_s",
            // Issue 25: the engine's own statement of the requests it holds at once, beside the capacity map.
            "scenarios[].server.capacity.max_concurrency",
            "scenarios[].server.capacity.max_running_requests",
            // Issue 25: the engine's own count of a concurrency probe's requests, beside the timing's verdict.
            "scenarios[].engine_count");

    /**
     * Values that differ from run to run: written as {@code <varies>} where not null (whether one is known is not
     * chance).
     */
    private static final List<Pattern> VARIES = patterns(
            "metadata\\.(run_id|timestamp|started_at|finished_at)",
            "scenarios\\[]\\.metrics\\.(duration_s|\\w+_throughput)",
            "scenarios\\[]\\.metrics\\.\\w+_ms\\.(?!count$)\\w+",
            "scenarios\\[]\\.requests\\[]\\.\\w+_ms",
            "scenarios\\[]\\.server\\.(id|pid|startup_s)");

    /** Values of the machine the test runs on: written as {@code <machine>} whatever they are, null included. */
    private static final List<Pattern> MACHINE = patterns(
            "metadata\\.(hardware|accelerator|chip|env|host|git_commit|git_dirty)",
            "metadata\\.tool\\.version",
            "scenarios\\[]\\.server\\.memory_(before|after)_mib",
            // The floor rests on this machine's CPU peak and the step's TTFT.
            "scenarios\\[]\\.roofline",
            "frontier\\.<backend>\\.predicted\\.prefill_floor");

    /** A loopback address with its port, as an error may quote it. */
    private static final Pattern HOST_PORT = Pattern.compile("(127\\.0\\.0\\.1|localhost|\\[::1]):\\d+");

    private static final Pattern PORT_FLAG = Pattern.compile("--port \\d+");

    private static final Path GOLDEN = Path.of("src/test/resources/dev/ctxprobe/results/golden");

    private static final JsonMapper JSON =
            JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    /** The demo (experiments/demo.yaml) at a budget of 1 MiB: a curve step, then the frontier in two launches. */
    private static final String DEMO = """
            experiment: golden_demo
            description: the demo at a 1 MiB KV budget
            model: micro
            context_pad: 256
            vars:
              kv_memory: 1MiB
              threads: 2
            load:
              output_len: 1
              num_prompts: 1
              max_concurrency: 1
              request_rate: inf
              warmup: 0
            sweep:
              strategy: frontier
              frontier: {min: 1024, max: 8192, precision: 0.01, align: 256, max_launches: 8}
              curve: [1024]
            timeouts:
              startup_s: 60
              request_s: 60
              shutdown_s: 10
            backends:
              - name: embedded
                engine: embedded
                command: >-
                  ctxprobe serve --host {host} --port {port} --ctx-size {max_model_len}
                  --kv-memory {kv_memory} --threads {threads}
            """;

    @TempDir
    Path dir;

    @Test
    void aDemoRunWritesWhatTheGoldenFileHolds() throws IOException {
        Path exp = dir.resolve("golden_demo.yaml");
        Files.writeString(exp, DEMO);

        check("golden_demo", run(exp), "demo.json");
    }

    /**
     * vLLM refuses to start above its KV capacity, SGLang starts and rejects the prompt in a 200 stream: one ok
     * step and one failed step with the engine's words as evidence each. The machine is declared, so the prediction
     * beside each answer reads nothing of the machine the test runs on.
     */
    @Test
    void aStandInRunWritesWhatTheGoldenFileHolds() throws IOException {
        Path exp = TestExperiments.write(
                dir,
                "golden_stand_in",
                "  strategy: list\n  targets: [1000, 3000]\n",
                "  output_len: 1\n  num_prompts: 2\n  max_concurrency: 1\n  request_rate: 10000\n  warmup: 1\n",
                "{startup_s: 20, request_s: 5, shutdown_s: 3}",
                "hardware: {name: test engine on CPU, accelerator: none, chip: cpu, devices: 1, memory_gib: 16}\n",
                List.of(
                        new TestExperiments.Backend("vllm", "vllm", null, "--capacity 2500 --prefill-us-per-token 20"),
                        new TestExperiments.Backend(
                                "sglang", "sglang", null, "--mode sglang --capacity 2500 --prefill-us-per-token 20")));

        check("golden_stand_in", run(exp), "stand-in.json");
    }

    private Path run(Path experiment) throws IOException {
        CliRun run = CliRun.of(
                "run", experiment.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> experiments = Files.list(dir.resolve("out"));
                Stream<Path> runs = Files.list(experiments.findFirst().orElseThrow())) {
            return runs.findFirst().orElseThrow().resolve(ResultFiles.NAME);
        }
    }

    private void check(String what, Path results, String goldenName) throws IOException {
        JsonNode raw = JSON.readTree(results.toFile());
        assertShowsWhatItIsFor(raw);

        JsonNode fresh = normalized(raw);
        Path golden = GOLDEN.resolve(goldenName);
        if (Boolean.getBoolean("ctxprobe.updateResultsGolden")) {
            Files.createDirectories(GOLDEN);
            Files.writeString(golden, JSON.writeValueAsString(fresh) + "\n", StandardCharsets.UTF_8);
        }
        assertThat(golden)
                .as("golden file; record it with -Dctxprobe.updateResultsGolden=true")
                .exists();
        List<String> differences = new ArrayList<>();
        compare(JSON.readTree(golden.toFile()), fresh, "", ADDITIVE_KEYS, differences::add);
        assertThat(differences)
                .as(
                        "%s: results.json against %s (a key may only be added if it is in ADDITIVE_KEYS; re-record"
                                + " only for an intended change, see the golden folder's README)",
                        what, golden)
                .isEmpty();
        assertHasTheSeedsKeys(raw);
        assertRoundTrips(results, raw);
    }

    /** A golden file recorded from a run that missed its point would guard nothing. */
    private static void assertShowsWhatItIsFor(JsonNode doc) {
        List<JsonNode> steps = new ArrayList<>();
        doc.get("scenarios").forEach(steps::add);
        assertThat(steps).anyMatch(s -> s.get("success").asBoolean());
        assertThat(steps)
                .filteredOn(s -> !s.get("success").asBoolean())
                .isNotEmpty()
                .allSatisfy(s -> {
                    assertThat(s.get("failure").get("evidence")).as("evidence").isNotEmpty();
                    assertThat(s.get("server").get("max_context_hint").isNull())
                            .as("hint")
                            .isFalse();
                });
        assertThat(doc.get("frontier").properties()).isNotEmpty();
    }

    /**
     * Every seed key is still there, in the metadata, in every step and in every step's metrics. The keys are the
     * H200 seed's: the P800 seed names {@code max_model_len} {@code max_context_len}, which ctxprobe reads and
     * does not write.
     */
    private static void assertHasTheSeedsKeys(JsonNode doc) throws IOException {
        JsonNode seed = JSON.readTree(FaultRuns.h200Seed().toFile());
        assertThat(keys(doc.get("metadata"))).containsAll(keys(seed.get("metadata")));
        Set<String> scenarioKeys = new TreeSet<>();
        Map<String, Set<String>> metricsKeys = new TreeMap<>();
        for (JsonNode s : seed.get("scenarios")) {
            scenarioKeys.addAll(keys(s));
            if (s.get("metrics").isObject()) {
                s.get("metrics")
                        .properties()
                        .forEach(m -> metricsKeys
                                .computeIfAbsent(m.getKey(), k -> new TreeSet<>())
                                .addAll(m.getValue().isObject() ? keys(m.getValue()) : Set.of()));
            }
        }
        assertThat(scenarioKeys).contains("backend", "target_len", "max_model_len", "success", "metrics", "error");
        for (JsonNode s : doc.get("scenarios")) {
            String step =
                    s.get("backend").asString() + " " + s.get("target_len").asLong();
            assertThat(keys(s)).as(step).containsAll(scenarioKeys);
            JsonNode metrics = s.get("metrics");
            if (metrics.isObject()) {
                assertThat(keys(metrics)).as(step + " metrics").containsAll(metricsKeys.keySet());
                metricsKeys.forEach((key, inside) -> {
                    if (!inside.isEmpty()) {
                        assertThat(keys(metrics.get(key))).as(step + " " + key).containsAll(inside);
                    }
                });
            }
        }
    }

    /** ctxprobe's reader and writer: what they write back is the same JSON tree, key for key. */
    private void assertRoundTrips(Path results, JsonNode raw) throws IOException {
        Path again = dir.resolve("again-" + results.getParent().getFileName() + ".json");
        ResultFiles.write(again, ResultFiles.read(results));
        List<String> differences = new ArrayList<>();
        compare(raw, JSON.readTree(again.toFile()), "", Set.of(), differences::add);
        assertThat(differences).as("written back after reading").isEmpty();
    }

    /** The file with the values of {@link #VARIES} and {@link #MACHINE} replaced, and its strings made stable. */
    private JsonNode normalized(JsonNode doc) {
        JsonNode copy = doc.deepCopy();
        normalize(copy, "");
        return copy;
    }

    private void normalize(JsonNode node, String generic) {
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                JsonNode item = node.get(i);
                String path = generic + "[]";
                JsonNode replaced = replacement(item, path);
                if (replaced != null) {
                    ((ArrayNode) node).set(i, replaced);
                } else {
                    normalize(item, path);
                }
            }
        } else if (node.isObject()) {
            ObjectNode object = (ObjectNode) node;
            for (String key : new ArrayList<>(object.propertyNames())) {
                String path = child(generic, key);
                JsonNode replaced = replacement(object.get(key), path);
                if (replaced != null) {
                    object.set(key, replaced);
                } else {
                    normalize(object.get(key), path);
                }
            }
        }
    }

    /** The value {@code node} at {@code generic} is written as, or null to keep it (and look inside it). */
    private JsonNode replacement(JsonNode node, String path) {
        String generic = generic(path);
        if (matches(MACHINE, generic)) {
            return StringNode.valueOf("<machine>");
        }
        if (matches(VARIES, generic) && !node.isNull()) {
            return StringNode.valueOf("<varies>");
        }
        if (node.isString()) {
            return StringNode.valueOf(strings(node.asString()));
        }
        return null;
    }

    /**
     * A string with the machine and the run taken out: the test engine's java binary and class path (its command
     * line, the experiment's vars) as {@code java} and {@code CLASSPATH}, the temporary folder as nothing (the
     * experiment file is its name alone), a {@code --port N} as {@code --port PORT} and a loopback address's port
     * as {@code PORT}.
     */
    private String strings(String s) {
        String out = s.replace(TestEngines.classpath(), "CLASSPATH")
                .replace(TestEngines.javaBin(), "java")
                .replace(dir + "/", "");
        out = PORT_FLAG.matcher(out).replaceAll("--port PORT");
        return HOST_PORT.matcher(out).replaceAll("$1:PORT");
    }

    /**
     * Reports every difference between {@code golden} and {@code fresh} by its JSON path: a key gone, a value
     * changed, an array of another length, and a key the golden file lacks unless its generic path is in
     * {@code additive}. Key order is not compared: JSON objects have none.
     */
    private static void compare(
            JsonNode golden, JsonNode fresh, String path, Set<String> additive, Consumer<String> out) {
        if (golden.isObject() && fresh.isObject()) {
            for (String key : golden.propertyNames()) {
                String at = child(path, key);
                if (!fresh.has(key)) {
                    out.accept(at + ": gone (was " + golden.get(key) + ")");
                } else {
                    compare(golden.get(key), fresh.get(key), at, additive, out);
                }
            }
            for (String key : fresh.propertyNames()) {
                if (!golden.has(key) && !additive.contains(generic(child(path, key)))) {
                    out.accept(
                            child(path, key) + ": new, and not one of the additive keys (now " + fresh.get(key) + ")");
                }
            }
        } else if (golden.isArray() && fresh.isArray()) {
            if (golden.size() != fresh.size()) {
                out.accept(path + ": " + fresh.size() + " items, was " + golden.size());
            }
            for (int i = 0; i < Math.min(golden.size(), fresh.size()); i++) {
                compare(golden.get(i), fresh.get(i), path + "[" + i + "]", additive, out);
            }
        } else if (!golden.equals(fresh)) {
            out.accept(path + ": was " + golden + ", now " + fresh);
        }
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    /** {@code scenarios[3].x} as {@code scenarios[].x}, {@code frontier.vllm.x} as {@code frontier.<backend>.x}. */
    private static String generic(String path) {
        return path.replaceAll("\\[\\d+]", "[]").replaceFirst("^frontier\\.[^.]+", "frontier.<backend>");
    }

    private static boolean matches(List<Pattern> patterns, String generic) {
        return patterns.stream().anyMatch(p -> p.matcher(generic).matches());
    }

    private static List<Pattern> patterns(String... regexes) {
        return Stream.of(regexes).map(Pattern::compile).toList();
    }

    private static Set<String> keys(JsonNode object) {
        Set<String> keys = new TreeSet<>();
        object.propertyNames().forEach(keys::add);
        return keys;
    }
}
