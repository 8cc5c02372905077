package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import dev.ctxprobe.testsupport.CapacityRun;
import dev.ctxprobe.testsupport.SampleRun;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The sample run the report goldens are made from is a real run: {@link SampleRun} through {@code ctxprobe run}.
 * This runs it again and checks that the committed file is what ctxprobe writes now, key for key and step for step
 * (the timings differ from run to run). With {@code -Dctxprobe.updateSample=true} it replaces the committed file;
 * regenerate the goldens after it ({@code GoldenReportTest}, {@code -Dctxprobe.updateGolden=true}).
 *
 * <p>The file keeps everything the run wrote except three strings of this machine: the java binary and the class
 * path the test engine ran with, written as {@code java} and {@code CLASSPATH}, and the temporary folder the
 * experiment file was in (its {@code script} is the file's name alone). The capacity-run fixture is recorded and
 * checked the same way.
 */
class SampleRunIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    @Test
    void theCommittedSampleIsWhatARunWritesNow() throws IOException {
        JsonNode fresh = runAndCompare(SampleRun.write(dir), SampleRun.NAME, ReportFixtures.SAMPLE);

        // What the goldens are meant to show: a frontier per backend, ending on a refusal of each kind.
        assertThat(steps(fresh))
                .contains("vllm 12032 ok", "vllm 12288 kv_insufficient")
                .anyMatch(s -> s.startsWith("sglang") && s.endsWith("request_rejected"));
    }

    /**
     * The capacity-run fixture of the surface reports (docs/search.md#the-capacity-map): each backend's pool held at
     * 1, 2 and 4 requests at once, the levels above 1 ending on {@code not_concurrent}. Re-recorded with the same
     * {@code -Dctxprobe.updateSample=true}.
     */
    @Test
    void theCommittedCapacityRunIsWhatARunWritesNow() throws IOException {
        JsonNode fresh = runAndCompare(CapacityRun.write(dir), CapacityRun.NAME, ReportFixtures.CAPACITY);

        for (String backend : List.of("vllm", "sglang")) {
            JsonNode surface = fresh.get("frontier").get(backend).get("surface");
            assertThat(surface).as(backend).hasSize(2);
            surface.forEach(level -> assertThat(level.get("cause").asString())
                    .as(backend + " " + level)
                    .isEqualTo("not_concurrent"));
        }
    }

    /** Runs the experiment, re-records {@code committedFile} when asked, and compares the two; the fresh run. */
    private JsonNode runAndCompare(Path experiment, String name, Path committedFile) throws IOException {
        Path out = dir.resolve("out-" + name);
        ReportFixtures.Run run =
                ReportFixtures.ctxprobe("run", experiment.toString(), "--out", out.toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        String written = Files.readString(resultsFile(out.resolve(name)), StandardCharsets.UTF_8)
                .replace(TestEngines.classpath(), "CLASSPATH")
                .replace(TestEngines.javaBin(), "java")
                .replace(dir + "/", "");
        if (Boolean.getBoolean("ctxprobe.updateSample")) {
            Files.createDirectories(committedFile.getParent());
            Files.writeString(committedFile, written, StandardCharsets.UTF_8);
        }
        JsonNode fresh = JSON.readTree(written);
        JsonNode committed = JSON.readTree(committedFile.toFile());

        Shape was = Shape.of(committed);
        Shape now = Shape.of(fresh);
        assertThat(was.keys())
                .as("the keys of the committed file against a fresh run's")
                .isEqualTo(now.keys());
        was.types().forEach((path, type) -> {
            if (now.types().containsKey(path)) {
                assertThat(type).as("type of %s", path).isEqualTo(now.types().get(path));
            }
        });
        assertThat(steps(committed)).as("the steps of the run").isEqualTo(steps(fresh));
        assertThat(answers(committed)).as("the answers").isEqualTo(answers(fresh));
        return fresh;
    }

    private static Path resultsFile(Path experimentDir) throws IOException {
        try (Stream<Path> runs = Files.list(experimentDir)) {
            return runs.findFirst().orElseThrow().resolve("results.json");
        }
    }

    /** Backend, target and outcome of every step, in order. */
    private static List<String> steps(JsonNode doc) {
        List<String> out = new ArrayList<>();
        doc.get("scenarios")
                .forEach(s -> out.add(
                        s.get("backend").asString() + " " + s.get("target_len").asLong() + concurrency(s) + " "
                                + s.get("outcome").asString()));
        return out;
    }

    /**
     * The frontier section without the capacity map's {@code detail}s: how N requests failed to be held at once
     * (which one finished first, whether a pause read as a preemption) is the machine's timing; the level's cause is
     * kept.
     */
    private static JsonNode answers(JsonNode doc) {
        JsonNode frontier = doc.get("frontier").deepCopy();
        frontier.forEach(backend -> {
            if (backend.has("surface")) {
                backend.get("surface").forEach(level -> ((ObjectNode) level).remove("detail"));
            }
        });
        return frontier;
    }

    /** A step's {@code xN} where it sent N requests at once; nothing for a single prompt. */
    private static String concurrency(JsonNode step) {
        int n = step.has("concurrency") ? step.get("concurrency").asInt() : 1;
        return n == 1 ? "" : " x" + n;
    }

    /**
     * Every key path ({@code .scenarios[].metrics.ttft_ms.count}), and the JSON type of each path's values where
     * they are not null: what is known varies by machine (accelerator memory is null without a GPU).
     */
    private record Shape(Set<String> keys, Map<String, String> types) {
        static Shape of(JsonNode doc) {
            Shape shape = new Shape(new TreeSet<>(), new TreeMap<>());
            shape.collect(doc, "");
            return shape;
        }

        private void collect(JsonNode node, String path) {
            if (node.isObject()) {
                node.properties().forEach(e -> {
                    keys.add(path + "." + e.getKey());
                    collect(e.getValue(), path + "." + e.getKey());
                });
            } else if (node.isArray()) {
                node.forEach(item -> collect(item, path + "[]"));
            } else if (!node.isNull()) {
                types.put(path, node.getNodeType().toString());
            }
        }
    }
}
