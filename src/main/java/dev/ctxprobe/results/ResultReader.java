package dev.ctxprobe.results;

import dev.ctxprobe.metrics.Stats;
import dev.ctxprobe.metrics.StepMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.json.JsonReadFeature;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a results file, ctxprobe's or a seed's, into a {@link ResultDocument}: first the types ({@link
 * ResultSchema}), then what the types cannot say (the rules below). Every problem is reported, each as {@code file:
 * path: what is wrong}; a file that passes binds without surprises.
 *
 * <p>The rules: a step names its backend; {@code target_len} is above 0 and {@code max_model_len} (the P800 seed's
 * {@code max_context_len}) not below it; {@code success} agrees with {@code outcome}, and {@code failure.class}
 * names a known class, the outcome's; counts and durations are not negative, and no more requests succeeded than
 * were sent; a frontier counts no negative launches and names positive targets. One backend probes a target once:
 * the list strategy refuses a target listed twice, the frontier search never offers a probed one, and a skipped
 * step is a target never probed. The one repeat ctxprobe writes is the rerun of an interrupted step by {@code
 * --resume}, so a step may share its backend and target with an earlier step only when that one was interrupted.
 */
final class ResultReader {

    private static final JsonMapper TREES = JsonMapper.builder(tools.jackson.core.json.JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(ResultFiles.MAX_STRING_CHARS)
                            .build())
                    .build())
            // Python's json module writes NaN and Infinity, and the seeds come from Python tools.
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private ResultReader() {}

    static ResultDocument read(Path file) throws ResultFiles.ResultFileException {
        Problems problems = new Problems(file.toString());
        JsonNode root = tree(file, problems);
        if (root == null) {
            throw problems.exception();
        }
        if (!root.isObject()) {
            problems.add(
                    "", "expected a JSON object with 'metadata' and 'scenarios', found " + ResultSchema.kind(root));
            throw problems.exception();
        }
        if (!root.has("scenarios")) {
            problems.add(
                    "scenarios",
                    "missing: not a ctxprobe results file or a seed results file (those list their steps there)");
            throw problems.exception();
        }
        JsonNode version = root.path("metadata").path("schema_version");
        if (version.isIntegralNumber() && version.asLong() > Metadata.SCHEMA_VERSION) {
            problems.add(
                    "metadata.schema_version",
                    version.asLong() + ": written by a newer ctxprobe; this one reads up to version "
                            + Metadata.SCHEMA_VERSION + ": update ctxprobe to read it");
            throw problems.exception();
        }
        ResultSchema.check(root, problems);
        if (problems.any()) {
            throw problems.exception();
        }
        ResultDocument doc = bind(root, problems);
        if (doc != null) {
            rules(doc, root, problems);
        }
        if (problems.any()) {
            throw problems.exception();
        }
        return doc;
    }

    private static JsonNode tree(Path file, Problems problems) {
        byte[] content;
        try {
            long size = Files.size(file);
            if (size > ResultFiles.MAX_BYTES) {
                problems.add(
                        "",
                        String.format(Locale.ROOT, "%,d", size) + " bytes: a results file is at most "
                                + (ResultFiles.MAX_BYTES >> 20) + " MiB (a run of a thousand steps writes a few MiB);"
                                + " this is not one ctxprobe wrote");
                return null;
            }
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            problems.add("", "no such file");
            return null;
        } catch (IOException e) {
            problems.add("", "cannot be read: " + e.getMessage());
            return null;
        }
        try {
            JsonNode root = TREES.readTree(content);
            if (root == null || root.isMissingNode()) {
                problems.add("", "the file is empty, not a results file");
                return null;
            }
            return root;
        } catch (StreamConstraintsException e) {
            problems.add(
                    "",
                    "a string" + position(tooLongAt(content)) + " is longer than "
                            + String.format(Locale.ROOT, "%,d", ResultFiles.MAX_STRING_CHARS)
                            + " characters, the most one value of a results file holds; this is not one ctxprobe"
                            + " wrote");
            return null;
        } catch (JacksonException e) {
            problems.add(
                    "",
                    "not valid JSON" + position(e) + ": " + firstLine(e)
                            + " (the file is truncated or was edited by hand)");
            return null;
        }
    }

    // The schema has checked every type the model binds; should Jackson still refuse, its path is named.
    private static ResultDocument bind(JsonNode root, Problems problems) {
        try {
            return ResultFiles.MAPPER.treeToValue(root, ResultDocument.class);
        } catch (DatabindException e) {
            problems.add(path(e.getPath()), "cannot be read into the result model");
            return null;
        } catch (IllegalArgumentException e) {
            problems.add("", "does not fit the result model: " + e.getMessage());
            return null;
        }
    }

    private static void rules(ResultDocument doc, JsonNode root, Problems problems) {
        Map<Point, Integer> seen = new HashMap<>();
        for (int i = 0; i < doc.scenarios().size(); i++) {
            Scenario s = doc.scenarios().get(i);
            String at = "scenarios[" + i + "]";
            String limitKey = root.get("scenarios").get(i).has("max_model_len") ? "max_model_len" : "max_context_len";
            if (s.backend().isBlank()) {
                problems.add(at + ".backend", "empty; every step names its backend");
            }
            if (s.targetLen() <= 0) {
                problems.add(
                        at + ".target_len", s.targetLen() + " is not a length; expected a number of tokens above 0");
            } else if (s.maxModelLen() < s.targetLen()) {
                problems.add(
                        at + "." + limitKey,
                        s.maxModelLen() + " is below target_len " + s.targetLen()
                                + "; a server cannot serve a prompt longer than its context");
            }
            if (s.concurrency() < 1) {
                problems.add(
                        at + ".concurrency",
                        s.concurrency() + " is not a number of requests; expected 1 or more sent at once");
            }
            if (s.success() != s.outcome().passed()) {
                problems.add(
                        at + ".success",
                        s.success() + " but outcome is '" + s.outcome().id() + "'; one of them was changed by hand");
            }
            failureClass(s, at, problems);
            if (s.metrics() != null) {
                metrics(s.metrics(), at + ".metrics", problems);
            }
            Integer earlier = seen.get(s.point());
            if (earlier != null && !doc.scenarios().get(earlier).outcome().interrupted()) {
                problems.add(
                        at,
                        "a second step of " + s.backend() + " at target_len " + s.targetLen()
                                + (s.concurrency() == 1 ? "" : " and concurrency " + s.concurrency())
                                + " (the first is scenarios[" + earlier
                                + "]); a run probes each target of a backend once: remove one of them");
            }
            seen.put(s.point(), i);
        }
        doc.frontier().forEach((backend, f) -> {
            String at = ResultSchema.join("frontier", backend);
            if (f.launches() < 0) {
                problems.add(at + ".launches", f.launches() + " is negative");
            }
            positive(f.maxOkTarget(), at + ".max_ok_target", problems);
            positive(f.minFailedTarget(), at + ".min_failed_target", problems);
            positive(f.predictedMax(), at + ".predicted_max", problems);
        });
    }

    private static void failureClass(Scenario s, String at, Problems problems) {
        if (s.failure() == null || s.failure().failureClass() == null) {
            return;
        }
        String id = s.failure().failureClass();
        if (Arrays.stream(FailureClass.values()).noneMatch(c -> c.id().equals(id))) {
            problems.add(at + ".failure.class", "unknown failure class '" + id + "'");
        } else if (s.outcome().failure().isPresent()
                && !s.outcome().failure().get().id().equals(id)) {
            problems.add(
                    at + ".failure.class",
                    "'" + id + "' but outcome is '" + s.outcome().id() + "'; a failed step has one class");
        }
    }

    private static void metrics(StepMetrics m, String at, Problems problems) {
        notNegative(m.successCount(), at + ".success_count", problems);
        notNegative(m.totalCount(), at + ".total_count", problems);
        if (m.successCount() > m.totalCount()) {
            problems.add(
                    at + ".success_count",
                    m.successCount() + " is above total_count " + m.totalCount()
                            + "; more requests cannot succeed than were sent");
        }
        notNegative(m.durationS(), at + ".duration_s", problems);
        notNegative(m.totalInputTokens(), at + ".total_input_tokens", problems);
        notNegative(m.totalOutputTokens(), at + ".total_output_tokens", problems);
        List<Map.Entry<String, Stats>> stats = List.of(
                Map.entry("e2e_ms", m.e2eMs()),
                Map.entry("ttft_ms", m.ttftMs()),
                Map.entry("tpot_ms", m.tpotMs()),
                Map.entry("itl_ms", m.itlMs()));
        for (Map.Entry<String, Stats> st : stats) {
            if (st.getValue().count() != null) {
                notNegative(st.getValue().count(), at + "." + st.getKey() + ".count", problems);
            }
        }
    }

    private static void notNegative(double value, String at, Problems problems) {
        // NaN passes: Python tools write it for a value they could not compute, and it is shown as unknown.
        if (value < 0) {
            problems.add(at, String.format(Locale.ROOT, "%s is negative", plain(value)));
        }
    }

    private static void positive(Long value, String at, Problems problems) {
        if (value != null && value <= 0) {
            problems.add(at, value + " is not a length; expected a number of tokens above 0");
        }
    }

    private static String plain(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15
                ? Long.toString((long) value)
                : Double.toString(value);
    }

    // The parser's limit says what, not where; a streaming pass stops where it does.
    private static TokenStreamLocation tooLongAt(byte[] content) {
        try (tools.jackson.core.JsonParser p = TREES.createParser(content)) {
            try {
                while (p.nextToken() != null) {
                    if (p.currentToken().isScalarValue()) {
                        p.getString();
                    }
                }
            } catch (StreamConstraintsException e) {
                return p.currentTokenLocation();
            }
        } catch (JacksonException other) {
            return null;
        }
        return null;
    }

    private static String position(JacksonException e) {
        return position(e.getLocation());
    }

    private static String position(TokenStreamLocation at) {
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

    private static String path(List<JacksonException.Reference> references) {
        StringBuilder out = new StringBuilder();
        for (JacksonException.Reference r : references) {
            if (r.getPropertyName() != null) {
                out.append(out.isEmpty() ? "" : ".").append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                out.append('[').append(r.getIndex()).append(']');
            }
        }
        return out.toString();
    }
}
