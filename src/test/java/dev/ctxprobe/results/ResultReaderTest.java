package dev.ctxprobe.results;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/** The one results reader: ctxprobe's files and the seeds', and every way a hand-edited file can be wrong. */
class ResultReaderTest {
    /** A real run's file (the report's sample run). */
    static final Path SAMPLE = Path.of("src/test/resources/dev/ctxprobe/report/sample-run/results.json");

    static final Path H200 = Path.of("seeds/dsv4_h200_max_context_length.json");
    static final Path P800 = Path.of("seeds/dsv4_p800_max_context_length.json");

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;

    private int edits;

    private Path write(String name, String content) throws Exception {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    /** The sample with one change made to its tree, written to a file. */
    private Path edited(Consumer<ObjectNode> edit) throws Exception {
        ObjectNode root = (ObjectNode) JSON.readTree(SAMPLE.toFile());
        edit.accept(root);
        return write("edited-" + ++edits + ".json", JSON.writeValueAsString(root));
    }

    private static ObjectNode step(ObjectNode root, int i) {
        return (ObjectNode) root.get("scenarios").get(i);
    }

    private static List<String> problems(Path file) {
        try {
            ResultFiles.read(file);
        } catch (ResultFiles.ResultFileException e) {
            return e.problems();
        }
        throw new AssertionError(file + " was read without a problem");
    }

    @Test
    void readsARealRunWithEveryExtension() throws Exception {
        ResultDocument doc = ResultFiles.read(SAMPLE);

        assertThat(doc.metadata().tool().name()).isEqualTo("ctxprobe");
        assertThat(doc.metadata().finishedAt()).isNotNull();
        Scenario ok = doc.scenarios().getFirst();
        assertThat(ok.outcome()).isEqualTo(Outcome.OK);
        assertThat(ok.metrics().ttftMs().count()).isEqualTo(2);
        assertThat(ok.server().id()).isNotBlank();
        assertThat(ok.server().ended()).isNotNull();
        assertThat(ok.requests())
                .hasSize(3)
                .allSatisfy(r -> assertThat(r.sendMs()).isNotNull());
        assertThat(doc.scenarios()).extracting(s -> s.outcome().id()).contains("kv_insufficient", "request_rejected");
        assertThat(doc.frontier()).containsOnlyKeys("vllm", "sglang");
    }

    @Test
    void readsTheSeedsAsTheyAreDefectsIncluded() throws Exception {
        ResultDocument p800 = ResultFiles.read(P800);
        Scenario at64k = p800.scenarios().get(4);
        assertThat(at64k.targetLen()).isEqualTo(65_536);
        // The P800 file names the limit max_context_len.
        assertThat(at64k.maxModelLen()).isEqualTo(66_560);
        // Its p90 and p95 of 0.0 are a defect of the tool that wrote it: kept, not repaired.
        assertThat(at64k.metrics().ttftMs().p90()).isZero();
        assertThat(at64k.metrics().ttftMs().p50()).isEqualTo(390.70626598550007);
        // The seeds' stats have no count, std, min or max: absent, not zero.
        assertThat(at64k.metrics().ttftMs().count()).isNull();
        assertThat(at64k.metrics().ttftMs().std()).isNull();
        assertThat(at64k.outcome()).isEqualTo(Outcome.OK);
        assertThat(at64k.failure()).isNull();
        assertThat(at64k.server()).isNull();
        Scenario failed = p800.scenarios().getLast();
        assertThat(failed.outcome()).isEqualTo(Outcome.UNCLASSIFIED);
        assertThat(failed.metrics()).isNull();
        assertThat(failed.error()).startsWith("bench_serving exited with code 137");
        assertThat(p800.frontier()).isEmpty();

        ResultDocument h200 = ResultFiles.read(H200);
        assertThat(h200.scenarios()).hasSize(18);
        assertThat(h200.config()).containsEntry("context_pad", 1024);
    }

    @Test
    void aSeedsStatsKeepTheirShapeWhenWrittenAgain() throws Exception {
        ResultDocument p800 = ResultFiles.read(P800);
        Path again = dir.resolve("again.json");
        ResultFiles.write(again, p800);

        JsonNode original = JSON.readTree(P800.toFile()).get("scenarios").get(0).get("metrics");
        JsonNode rewritten =
                JSON.readTree(again.toFile()).get("scenarios").get(0).get("metrics");
        assertThat(rewritten).isEqualTo(original);
    }

    @Test
    void resultsGetTheModeOfTheFolderOtherFiles() throws Exception {
        // issue 31: results.json was 0600 (a temporary file's mode, kept by the rename) beside 0644 logs and report.
        Path results = dir.resolve("results.json");
        ResultFiles.write(results, ResultFiles.read(P800));
        ResultFiles.write(results, ResultFiles.read(P800));
        Path other = Files.writeString(dir.resolve("experiment.yaml"), "x");

        assertThat(Files.getPosixFilePermissions(results)).isEqualTo(Files.getPosixFilePermissions(other));
        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("results.json", "experiment.yaml");
        }
    }

    @Test
    void pythonsNanAndInfinityAndJacksonsWordsForThemAreNumbers() throws Exception {
        String seed = Files.readString(P800);
        Path python = write(
                "nan.json",
                seed.replaceFirst("\"duration_s\": [0-9.]+", "\"duration_s\": NaN")
                        .replaceFirst("\"request_throughput\": [0-9.]+", "\"request_throughput\": Infinity"));
        Scenario first = ResultFiles.read(python).scenarios().getFirst();
        assertThat(first.metrics().durationS()).isNaN();
        assertThat(first.metrics().requestThroughput()).isInfinite();

        Path jackson = write("words.json", seed.replaceFirst("\"duration_s\": [0-9.]+", "\"duration_s\": \"NaN\""));
        assertThat(ResultFiles.read(jackson).scenarios().getFirst().metrics().durationS())
                .isNaN();
    }

    @Test
    void aTruncatedFileNamesThePosition() throws Exception {
        String full = Files.readString(SAMPLE);
        // Cut after a comma near the middle: a cut inside a literal (n of null) reads as a bad token, not as an end.
        Path truncated = write("truncated.json", full.substring(0, full.lastIndexOf(',', full.length() / 2) + 1));

        assertThat(problems(truncated))
                .singleElement()
                .asString()
                .startsWith(truncated + ": not valid JSON at line ")
                .contains(", column ", "end-of-input", "truncated");
    }

    @Test
    void aHandBrokenFileNamesTheLineOfTheMistake() throws Exception {
        Path broken = write(
                "broken.json", "{\n  \"scenarios\": [\n    {\"backend\": \"vllm\",, \"target_len\": 1}\n  ]\n}\n");

        assertThat(problems(broken)).singleElement().asString().contains("at line 3, column ");
    }

    @Test
    void notAResultsFileSaysSo() throws Exception {
        assertThat(problems(write("experiment.json", "{\"backends\": {}}")))
                .singleElement()
                .asString()
                .endsWith("experiment.json: scenarios: missing: not a ctxprobe results file or a seed results file"
                        + " (those list their steps there)");
        assertThat(problems(write("empty.json", ""))).singleElement().asString().contains("empty");
        assertThat(problems(write("list.json", "[1, 2]")))
                .singleElement()
                .asString()
                .contains("found an array");
        assertThat(problems(dir.resolve("nope.json"))).containsExactly(dir.resolve("nope.json") + ": no such file");
    }

    @Test
    void aWrongTypeNamesTheFileTheKeyAndWhatItHolds() throws Exception {
        Path file = edited(root -> step(root, 0).put("target_len", "lots"));

        assertThat(problems(file))
                .containsExactly(file + ": scenarios[0].target_len: expected an integer, found the string \"lots\"");
    }

    @Test
    void everyProblemIsListedEachWithItsPath() throws Exception {
        Path file = edited(root -> {
            step(root, 0).remove("success");
            step(root, 1).put("outcome", "exploded");
            ((ObjectNode) step(root, 0).get("metrics")).remove("ttft_ms");
            ((ObjectNode) step(root, 0).get("metrics").get("e2e_ms")).remove("p99");
            ((ObjectNode) step(root, 0).get("server")).put("pid", 1.5);
            ((ObjectNode) step(root, 0).get("server").get("ended")).put("reason", "bored");
            ((ArrayNode) step(root, 0).get("requests")).add(JsonNodeFactory.instance.nullNode());
            root.put("frontier", 3);
        });

        List<String> problems = problems(file);
        assertThat(problems)
                .containsExactlyInAnyOrder(
                        file + ": scenarios[0].success: missing; expected true or false",
                        file + ": scenarios[0].metrics.ttft_ms: missing; expected an object",
                        file + ": scenarios[0].metrics.e2e_ms.p99: missing; expected a number",
                        file + ": scenarios[0].server.pid: expected an integer, found 1.5",
                        file + ": scenarios[0].server.ended.reason: unknown value \"bored\"; expected one of exited,"
                                + " stopped, out_of_memory, time_limit, node_failure, preempted, cancelled, unknown",
                        file + ": scenarios[0].requests[3]: null; expected an object",
                        file + ": scenarios[1].outcome: unknown outcome \"exploded\"; expected ok, skipped, failed or"
                                + " a failure class (port_busy, gpu_busy, kv_insufficient, oom_startup, config_rejected,"
                                + " startup_crash, startup_timeout, request_rejected, truncated, token_mismatch,"
                                + " not_concurrent, server_crash, timeout, http_error, queue_timeout, cluster_ended, submit_rejected,"
                                + " client_error, interrupted)",
                        file + ": frontier: expected an object, found 3");
    }

    @Test
    void valuesOutOfRangeAndDisagreeingKeysAreProblems() throws Exception {
        Path file = edited(root -> {
            step(root, 0).put("target_len", 0);
            step(root, 1).put("max_model_len", 100);
            step(root, 1).put("success", false);
            ((ObjectNode) step(root, 3).get("metrics")).put("success_count", 5);
            ((ObjectNode) step(root, 3).get("metrics")).put("duration_s", -1.0);
            ((ObjectNode) root.get("frontier").get("vllm")).put("launches", -2);
        });
        int refused = index(file, "kv_insufficient");
        Path both = edited(root -> ((ObjectNode) step(root, refused).get("failure")).put("class", "oom_startup"));

        assertThat(problems(file))
                .containsExactlyInAnyOrder(
                        file + ": scenarios[0].target_len: 0 is not a length; expected a number of tokens above 0",
                        file + ": scenarios[1].max_model_len: 100 is below target_len 8192; a server cannot serve a"
                                + " prompt longer than its context",
                        file + ": scenarios[1].success: false but outcome is 'ok'; one of them was changed by hand",
                        file + ": scenarios[3].metrics.success_count: 5 is above total_count 2; more requests cannot"
                                + " succeed than were sent",
                        file + ": scenarios[3].metrics.duration_s: -1 is negative",
                        file + ": frontier.vllm.launches: -2 is negative");
        assertThat(problems(both))
                .containsExactly(
                        both + ": scenarios[" + refused
                                + "].failure.class: 'oom_startup' but outcome is 'kv_insufficient'; a failed step has one class");
    }

    @Test
    void aBackendProbesATargetOnceUnlessTheFirstTryWasInterrupted() throws Exception {
        Path twice = edited(
                root -> ((ArrayNode) root.get("scenarios")).add(step(root, 0).deepCopy()));
        int last = JSON.readTree(twice.toFile()).get("scenarios").size() - 1;
        assertThat(problems(twice))
                .containsExactly(twice + ": scenarios[" + last + "]: a second step of vllm at target_len 4096 (the"
                        + " first is scenarios[0]); a run probes each target of a backend once: remove one of them");

        Path rerun = edited(root -> {
            ObjectNode interrupted = step(root, 0).deepCopy();
            interrupted.put("success", false).put("outcome", "interrupted").putNull("metrics");
            ((ArrayNode) root.get("scenarios")).insert(0, interrupted);
        });
        assertThat(ResultFiles.read(rerun).scenarios()).hasSize(last + 1);

        Path otherBackend = edited(root -> {
            ObjectNode copy = step(root, 0).deepCopy();
            copy.put("backend", "vllm-2");
            ((ArrayNode) root.get("scenarios")).add(copy);
        });
        assertThat(ResultFiles.read(otherBackend).scenarios()).hasSize(last + 1);
    }

    /**
     * A hand edit can put anything anywhere: every value of a real run's file, replaced by each kind of JSON value,
     * either reads or gives problems that each name the file and a path. Nothing else escapes the reader.
     */
    @Test
    void noHandEditEscapesTheReader() throws Exception {
        JsonNode original = JSON.readTree(SAMPLE.toFile());
        // One path of each shape (scenarios/3/metrics/ttft_ms/p50 stands for every step's): the reader checks
        // by shape, and every path would take a minute.
        Map<String, String> byShape = new LinkedHashMap<>();
        List<String> all = new ArrayList<>();
        valuePaths(original, "", all);
        all.forEach(p -> byShape.putIfAbsent(p.replaceAll("/[0-9]+", "/#"), p));
        List<String> paths = new ArrayList<>(byShape.values());
        List<JsonNode> replacements = List.of(
                JsonNodeFactory.instance.stringNode("x"),
                JsonNodeFactory.instance.numberNode(-7),
                JsonNodeFactory.instance.numberNode(2.5),
                JsonNodeFactory.instance.numberNode(Long.MAX_VALUE),
                JsonNodeFactory.instance.booleanNode(true),
                JsonNodeFactory.instance.nullNode(),
                JsonNodeFactory.instance.objectNode(),
                JsonNodeFactory.instance.arrayNode());
        Path file = dir.resolve("fuzz.json");
        int read = 0;
        int refused = 0;
        for (String path : paths) {
            for (JsonNode replacement : replacements) {
                JsonNode edited = original.deepCopy();
                replace(edited, path, replacement);
                Files.writeString(file, JSON.writeValueAsString(edited));
                try {
                    ResultFiles.read(file);
                    read++;
                } catch (ResultFiles.ResultFileException e) {
                    refused++;
                    assertThat(e.problems())
                            .as("%s set to %s", path, replacement)
                            .isNotEmpty()
                            .allSatisfy(p -> assertThat(p)
                                    .startsWith(file + ": ")
                                    .doesNotContain("cannot be read into the result model", "java.", "Exception"));
                }
            }
        }
        assertThat(paths).hasSizeGreaterThan(100);
        assertThat(read).isPositive();
        assertThat(refused).isPositive();
    }

    private static void valuePaths(JsonNode node, String path, List<String> out) {
        if (!path.isEmpty()) {
            out.add(path);
        }
        if (node.isObject()) {
            node.properties().forEach(e -> valuePaths(e.getValue(), path + "/" + e.getKey(), out));
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                valuePaths(node.get(i), path + "/" + i, out);
            }
        }
    }

    private static void replace(JsonNode root, String path, JsonNode value) {
        int cut = path.lastIndexOf('/');
        JsonNode parent = cut == 0 ? root : root.at(path.substring(0, cut));
        String last = path.substring(cut + 1);
        if (parent instanceof ObjectNode o) {
            o.set(last, value);
        } else {
            ((ArrayNode) parent).set(Integer.parseInt(last), value);
        }
    }

    private static int index(Path file, String outcome) throws Exception {
        JsonNode scenarios = JSON.readTree(file.toFile()).get("scenarios");
        for (int i = 0; i < scenarios.size(); i++) {
            if (scenarios.get(i).get("outcome").asString().equals(outcome)) {
                return i;
            }
        }
        throw new AssertionError("no step with outcome " + outcome);
    }

    @Test
    void aFolderStandsForItsResultsOrThoseOfTheRunFoldersBelowIt() throws Exception {
        String sample = Files.readString(SAMPLE);
        write("results/exp/20260101-000000/results.json", sample);
        write("results/exp/20260102-000000/results.json", sample);

        assertThat(ResultFiles.find(dir.resolve("results")))
                .containsExactly(
                        dir.resolve("results/exp/20260101-000000/results.json"),
                        dir.resolve("results/exp/20260102-000000/results.json"));
        assertThat(ResultFiles.find(dir.resolve("results/exp/20260102-000000")))
                .containsExactly(dir.resolve("results/exp/20260102-000000/results.json"));
        Files.createDirectories(dir.resolve("nothing"));
        assertThatThrownBy(() -> ResultFiles.find(dir.resolve("nothing")))
                .hasMessage(dir.resolve("nothing") + ": no results.json in this folder or in run folders below it");
        assertThatThrownBy(() -> ResultFiles.find(dir.resolve("gone")))
                .hasMessage(dir.resolve("gone") + ": no such file or folder");
    }

    @Test
    void aSeedFailureCountsAsALengthFailure() throws Exception {
        ResultDocument h200 = ResultFiles.read(H200);
        Frontier vllm = Frontier.ofSteps(h200.scenariosOf("vllm"));
        assertThat(vllm.maxOkTarget()).isEqualTo(917_504L);
        assertThat(vllm.minFailedTarget()).isEqualTo(1_048_576L);
    }

    @Test
    void aFileOverTheLimitIsRefusedByItsSizeUnread() throws Exception {
        Path file = dir.resolve("huge.json");
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(ResultFiles.MAX_BYTES + 1);
        }
        assertThatThrownBy(() -> ResultFiles.read(file))
                .hasMessageContaining("67,108,865 bytes: a results file is at most 64 MiB");
    }

    @Test
    void oneStringOverTheLimitIsRefusedByTheParserWithItsPosition() throws Exception {
        Path file = write(
                "long.json",
                "{\"metadata\": {},\n \"scenarios\": [\"" + "s".repeat(ResultFiles.MAX_STRING_CHARS + 1) + "\"]}");
        assertThatThrownBy(() -> ResultFiles.read(file))
                .hasMessageContaining("a string at line 2")
                .hasMessageContaining("longer than 8,388,608 characters")
                .hasMessageNotContaining("StreamReadConstraints");
    }
}
