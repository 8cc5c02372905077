package dev.ctxprobe.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.json.JsonReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads results files (ctxprobe's {@code results.json} or the seeds' files) and run folders into {@link
 * ResultSet}s. Unknown keys are ignored; a key that is present with the wrong type, a file that is not
 * JSON, or one without {@code scenarios} is an error that names the file, the key and the position.
 */
final class ResultReader {

    /** The file name ctxprobe writes in a run folder. */
    static final String RESULTS_FILE = "results.json";

    /** results/&lt;experiment&gt;/&lt;run_id&gt;/results.json lies three levels below the results folder. */
    private static final int RUN_FOLDER_DEPTH = 3;

    private final JsonMapper mapper = JsonMapper.builder()
            // Python's json module writes NaN and Infinity, and the seeds come from Python tools.
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    /** Reads every input in order; a folder stands for the results files in it or in run folders below it. */
    List<ResultSet> read(List<Path> inputs) {
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException("no results files or run folders given");
        }
        List<ResultSet> sets = new ArrayList<>();
        for (Path input : inputs) {
            for (Path file : resultsFiles(input)) {
                sets.add(readFile(file));
            }
        }
        return sets;
    }

    /** The results files an input stands for: itself, its results.json, or those of the run folders below it. */
    static List<Path> resultsFiles(Path input) {
        if (!Files.exists(input)) {
            throw new ReportInputException(input, "no such file or folder");
        }
        if (!Files.isDirectory(input)) {
            return List.of(input);
        }
        Path direct = input.resolve(RESULTS_FILE);
        if (Files.isRegularFile(direct)) {
            return List.of(direct);
        }
        try (Stream<Path> found = Files.walk(input, RUN_FOLDER_DEPTH)) {
            List<Path> files = found.filter(p -> p.getFileName().toString().equals(RESULTS_FILE))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
            if (files.isEmpty()) {
                throw new ReportInputException(
                        input, "no " + RESULTS_FILE + " in this folder or in run folders below it");
            }
            return files;
        } catch (IOException e) {
            throw new ReportInputException(input, "cannot list the folder: " + e.getMessage(), e);
        }
    }

    /** Reads one results file. */
    ResultSet readFile(Path file) {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new ReportInputException(file, "no such file", e);
        } catch (IOException e) {
            throw new ReportInputException(file, "cannot read: " + e, e);
        }
        JsonNode root;
        try {
            root = mapper.readTree(content);
        } catch (JacksonException e) {
            throw new ReportInputException(file, "not valid JSON" + position(e) + ": " + firstLine(e), e);
        }
        if (root == null || root.isMissingNode()) {
            throw new ReportInputException(file, "the file is empty, not a results file");
        }
        return new FileReader(file).resultSet(root);
    }

    private static String position(JacksonException e) {
        TokenStreamLocation at = e.getLocation();
        if (at == null || at.getLineNr() < 0) {
            return "";
        }
        return " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    }

    /** Jackson's message without the source excerpt it appends on later lines. */
    private static String firstLine(JacksonException e) {
        String message = e.getOriginalMessage();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    /** Typed, path-aware access to one file's tree, so every error says where the bad value is. */
    private record FileReader(Path file) {

        ResultSet resultSet(JsonNode root) {
            if (!root.isObject()) {
                throw problem("", "expected a JSON object at the top level, found " + kind(root));
            }
            JsonNode scenariosNode = root.get("scenarios");
            if (scenariosNode == null || !scenariosNode.isArray()) {
                throw problem("scenarios", "no 'scenarios' array: not a ctxprobe results file or a seed results file");
            }
            RunInfo run = runInfo(object(root, "metadata", ""));
            List<ScenarioRow> rows = new ArrayList<>();
            for (int i = 0; i < scenariosNode.size(); i++) {
                String where = "scenarios[" + i + "]";
                JsonNode node = scenariosNode.get(i);
                if (!node.isObject()) {
                    throw problem(where, "expected an object, found " + kind(node));
                }
                rows.add(scenario(node, where));
            }
            Map<String, FrontierSummary> frontiers = new LinkedHashMap<>();
            JsonNode frontierNode = object(root, "frontier", "");
            if (frontierNode != null) {
                for (Map.Entry<String, JsonNode> entry : frontierNode.properties()) {
                    String where = "frontier." + entry.getKey();
                    if (!entry.getValue().isObject()) {
                        throw problem(where, "expected an object, found " + kind(entry.getValue()));
                    }
                    List<ScenarioRow> ofBackend = rows.stream()
                            .filter(r -> r.backend().equals(entry.getKey()))
                            .toList();
                    frontiers.put(entry.getKey(), frontier(entry.getKey(), entry.getValue(), where, ofBackend));
                }
            }
            // A file without a frontier section (the seeds), or a run still going, gets the steps' answer.
            for (ScenarioRow row : rows) {
                frontiers.computeIfAbsent(
                        row.backend(),
                        b -> FrontierSummary.derive(
                                b,
                                rows.stream().filter(r -> r.backend().equals(b)).toList()));
            }
            return new ResultSet(file.toString(), run, rows, new ArrayList<>(frontiers.values()));
        }

        private RunInfo runInfo(JsonNode meta) {
            if (meta == null) {
                return new RunInfo("", "", "", "", "", "", "", "", "", "", false, "");
            }
            String m = "metadata";
            return new RunInfo(
                    text(meta, "experiment", m),
                    text(meta, "run_id", m),
                    text(meta, "timestamp", m),
                    text(meta, "model", m),
                    text(meta, "backend", m),
                    text(meta, "engine", m),
                    text(meta, "hardware", m),
                    text(meta, "accelerator", m),
                    text(meta, "chip", m),
                    text(meta, "description", m),
                    meta.has("tool"),
                    text(meta, "finished_at", m));
        }

        private ScenarioRow scenario(JsonNode s, String where) {
            String backend = text(s, "backend", where);
            if (backend.isEmpty()) {
                throw problem(where + ".backend", "missing: every step names its backend");
            }
            Long target = integer(s, "target_len", where);
            if (target == null) {
                throw problem(where + ".target_len", "missing: every step names its target length");
            }
            Long maxModelLen = integer(s, "max_model_len", where);
            if (maxModelLen == null) {
                maxModelLen = integer(s, "max_context_len", where);
            }
            String outcome = optionalText(s, "outcome", where);
            Boolean success = bool(s, "success", where);
            if (success == null) {
                if (outcome == null) {
                    throw problem(where + ".success", "missing, and no 'outcome' either");
                }
                success = outcome.equals("ok");
            }
            if (outcome == null) {
                outcome = success ? "ok" : ScenarioRow.FAILED;
            }
            return new ScenarioRow(
                    backend,
                    target,
                    maxModelLen,
                    success,
                    outcome,
                    optionalText(s, "error", where),
                    optionalText(s, "server_args", where),
                    metrics(object(s, "metrics", where), where + ".metrics"),
                    failure(object(s, "failure", where), where + ".failure"),
                    server(object(s, "server", where), where + ".server"),
                    verification(object(s, "verification", where), where + ".verification"),
                    optionalText(s, "log", where));
        }

        private StepMetrics metrics(JsonNode m, String where) {
            if (m == null) {
                return null;
            }
            return new StepMetrics(
                    integer(m, "success_count", where),
                    integer(m, "total_count", where),
                    number(m, "duration_s", where),
                    number(m, "request_throughput", where),
                    number(m, "input_token_throughput", where),
                    number(m, "output_token_throughput", where),
                    integer(m, "total_input_tokens", where),
                    integer(m, "total_output_tokens", where),
                    stats(m, "e2e_ms", where),
                    stats(m, "ttft_ms", where),
                    stats(m, "tpot_ms", where),
                    stats(m, "itl_ms", where));
        }

        private Stats stats(JsonNode parent, String key, String parentWhere) {
            JsonNode s = object(parent, key, parentWhere);
            if (s == null) {
                return null;
            }
            String where = parentWhere + "." + key;
            return new Stats(
                    number(s, "mean", where),
                    number(s, "p50", where),
                    number(s, "p90", where),
                    number(s, "p95", where),
                    number(s, "p99", where),
                    integer(s, "count", where),
                    number(s, "std", where),
                    number(s, "min", where),
                    number(s, "max", where));
        }

        private StepFailure failure(JsonNode f, String where) {
            if (f == null) {
                return null;
            }
            return new StepFailure(
                    optionalText(f, "phase", where),
                    optionalText(f, "class", where),
                    optionalText(f, "detail", where),
                    texts(f, "evidence", where),
                    optionalText(f, "log", where),
                    integer(f, "exit_code", where));
        }

        private ServerInfo server(JsonNode s, String where) {
            if (s == null) {
                return null;
            }
            return new ServerInfo(
                    number(s, "startup_s", where),
                    optionalText(s, "ready_via", where),
                    integer(s, "pid", where),
                    integer(s, "exit_code", where),
                    bool(s, "stopped_cleanly", where),
                    integers(s, "leftover_pids", where),
                    integer(s, "kv_capacity_tokens", where),
                    integer(s, "max_context_hint", where));
        }

        private Verification verification(JsonNode v, String where) {
            if (v == null) {
                return null;
            }
            return new Verification(
                    integer(v, "target_len", where),
                    integer(v, "prompt_tokens", where),
                    integer(v, "completion_tokens", where),
                    bool(v, "exact", where));
        }

        private FrontierSummary frontier(String backend, JsonNode f, String where, List<ScenarioRow> rows) {
            Long launches = integer(f, "launches", where);
            return new FrontierSummary(
                    backend,
                    integer(f, "max_ok_target", where),
                    integer(f, "min_failed_target", where),
                    number(f, "bracket_ratio", where),
                    launches == null
                            ? (int) rows.stream().filter(ScenarioRow::launched).count()
                            : Math.toIntExact(launches),
                    integer(f, "predicted_max", where),
                    integers(f, "non_monotonic", where),
                    optionalText(f, "mode", where),
                    false);
        }

        private JsonNode object(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isObject()) {
                throw problem(join(where, key), "expected an object, found " + kind(v));
            }
            return v;
        }

        /** A display string; absent or null is "", and a number or boolean is shown as written. */
        private String text(JsonNode parent, String key, String where) {
            String v = optionalText(parent, key, where);
            return v == null ? "" : v;
        }

        private String optionalText(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (v.isContainer()) {
                throw problem(join(where, key), "expected a string, found " + kind(v));
            }
            return v.asString();
        }

        private List<String> texts(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return List.of();
            }
            if (!v.isArray()) {
                throw problem(join(where, key), "expected an array of strings, found " + kind(v));
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < v.size(); i++) {
                JsonNode item = v.get(i);
                if (item.isContainer()) {
                    throw problem(join(where, key) + "[" + i + "]", "expected a string, found " + kind(item));
                }
                out.add(item.asString());
            }
            return out;
        }

        private Double number(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isNumber()) {
                throw problem(join(where, key), "expected a number, found " + kind(v));
            }
            return v.doubleValue();
        }

        private Long integer(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            return integerValue(v, join(where, key));
        }

        private Long integerValue(JsonNode v, String where) {
            if (v.isIntegralNumber() && v.canConvertToLong()) {
                return v.longValue();
            }
            if (v.isFloatingPointNumber() && v.doubleValue() == Math.rint(v.doubleValue())) {
                return (long) v.doubleValue();
            }
            throw problem(where, "expected an integer, found " + kind(v));
        }

        private List<Long> integers(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return List.of();
            }
            if (!v.isArray()) {
                throw problem(join(where, key), "expected an array of integers, found " + kind(v));
            }
            List<Long> out = new ArrayList<>();
            for (int i = 0; i < v.size(); i++) {
                out.add(integerValue(v.get(i), join(where, key) + "[" + i + "]"));
            }
            return out;
        }

        private Boolean bool(JsonNode parent, String key, String where) {
            JsonNode v = parent.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isBoolean()) {
                throw problem(join(where, key), "expected true or false, found " + kind(v));
            }
            return v.booleanValue();
        }

        private ReportInputException problem(String where, String what) {
            return new ReportInputException(file, where.isEmpty() ? what : where + ": " + what);
        }

        private static String join(String where, String key) {
            return where.isEmpty() ? key : where + "." + key;
        }

        private static String kind(JsonNode v) {
            if (v.isObject()) {
                return "an object";
            }
            if (v.isArray()) {
                return "an array";
            }
            if (v.isString()) {
                String s = v.stringValue();
                return "the string \"" + Cells.oneLine(s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
            }
            return v.toString();
        }
    }
}
