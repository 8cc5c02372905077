package dev.ctxprobe.engine;

import static dev.ctxprobe.engine.LogText.fmt;

import dev.ctxprobe.client.TokenRange;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One serving engine as data: how to tell it is ready, what its limits mean, and the rules that turn its
 * log lines and error answers into failure classes and capacity numbers. Profiles live in {@link
 * EngineProfiles}; nothing here launches or talks to anything.
 *
 * @param launchesServer false for an endpoint that is already running ({@code openai})
 * @param readinessPath the GET path that answers 200 once the server is ready
 * @param hintKind what a capacity named by this engine limits
 * @param promptRule the largest prompt accepted with one output token, given the configured context length
 * @param tokenRange token ids safe to use as prompt filler
 * @param emptyAnswerMeansTooLong true when an over-long prompt gets an empty 200 (LMDeploy) instead of an error
 */
public record EngineProfile(
        String name,
        boolean launchesServer,
        String readinessPath,
        HintKind hintKind,
        LongUnaryOperator promptRule,
        TokenRange tokenRange,
        boolean emptyAnswerMeansTooLong,
        List<CapacityRule> capacityRules,
        List<StartupRule> startupRules,
        List<ResponseRule> responseRules) {

    /** A wrapped refusal may continue on the next lines; numbers are looked for this far below the match. */
    private static final int WINDOW_BELOW = 3;

    private static final int DETAIL_QUOTE_CHARS = 200;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern MEANINGFUL =
            LogText.pattern("error|exception|fatal|abort|panic|killed|segmentation fault|core dumped|failed|traceback");
    // Lines that announce an error without naming it: the cause is on an earlier line.
    private static final Pattern NOT_A_CAUSE =
            LogText.pattern("traceback \\(most recent call last\\)|see root cause above");

    public EngineProfile {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(readinessPath, "readinessPath");
        Objects.requireNonNull(hintKind, "hintKind");
        Objects.requireNonNull(promptRule, "promptRule");
        Objects.requireNonNull(tokenRange, "tokenRange");
        capacityRules = List.copyOf(capacityRules);
        startupRules = List.copyOf(startupRules);
        responseRules = List.copyOf(responseRules);
    }

    /** Which capacity number a log line gives. */
    public enum CapacityField {
        KV_CAPACITY,
        MAX_CONTEXT
    }

    /** A startup log line that names a capacity: group 1 of {@code pattern} is the number. */
    public record CapacityRule(Pattern pattern, CapacityField field) {}

    /** The role of a number read near a failure line. */
    public enum Role {
        /** The capacity the failure names: the search's hint. */
        HINT,
        /** Tokens the KV cache holds. */
        KV,
        /** Tokens the configuration asked for. */
        NEED
    }

    /**
     * A number to read for a startup failure: group 1 of {@code pattern}, looked for near the failure line
     * first, then anywhere in the log (the latest occurrence).
     */
    public record NumberRead(Role role, Pattern pattern) {}

    /** What a startup rule found: the line and the numbers read for it (null when absent). */
    public record Found(String line, Long hint, Long kv, Long need) {}

    /**
     * A startup failure: a short stable {@code trigger} found in one log line means {@code failureClass};
     * {@code detail} writes the sentence from what was found.
     */
    public record StartupRule(
            FailureClass failureClass, Pattern trigger, List<NumberRead> reads, Function<Found, String> detail) {
        public StartupRule {
            reads = List.copyOf(reads);
        }
    }

    /**
     * A request refused because the prompt is too long: {@code trigger} found in the answer; group 1 of
     * {@code limit} (found anywhere in the answer, may be null) is the limit the engine names.
     */
    public record ResponseRule(Pattern trigger, Pattern limit) {}

    /** The largest prompt the engine accepts with one output token when configured for {@code maxModelLen}. */
    public long largestPrompt(long maxModelLen) {
        if (maxModelLen < 1) {
            throw new IllegalArgumentException("max_model_len must be positive, got " + maxModelLen);
        }
        return Math.max(0, promptRule.applyAsLong(maxModelLen));
    }

    /** The capacity the startup log reports; for each number the latest line wins. */
    public Capacity readCapacity(List<String> logLines) {
        Map<CapacityField, Long> found = new EnumMap<>(CapacityField.class);
        for (String raw : logLines) {
            String line = LogText.clean(raw);
            for (CapacityRule rule : capacityRules) {
                Matcher m = rule.pattern().matcher(line);
                if (m.find()) {
                    found.put(rule.field(), LogText.parseNumber(m.group(1)));
                }
            }
        }
        return new Capacity(found.get(CapacityField.KV_CAPACITY), found.get(CapacityField.MAX_CONTEXT));
    }

    /**
     * Why the server did not become ready. {@code exitCode} is null when it was still running at the startup
     * deadline. Empty for a profile that launches no server.
     */
    public Optional<Diagnosis> diagnoseStartup(Integer exitCode, List<String> logLines) {
        if (!launchesServer) {
            return Optional.empty();
        }
        List<String> lines = logLines.stream().map(LogText::clean).toList();
        Capacity capacity = readCapacity(lines);
        if (exitCode == null) {
            return Optional.of(timeout(lines, capacity));
        }
        for (StartupRule rule : startupRules) {
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = rule.trigger().matcher(lines.get(i));
                if (m.find()) {
                    return Optional.of(matched(rule, lines, i, m.start(), capacity));
                }
            }
        }
        return Optional.of(crash(exitCode, lines, capacity));
    }

    /**
     * Why a request failed: {@code request_rejected} when a 4xx answer (or an error event inside a 200
     * stream) says the prompt is too long, else {@code http_error}.
     */
    public Diagnosis diagnoseResponse(int httpStatus, String bodyOrErrorEvent) {
        String body = bodyOrErrorEvent == null ? "" : LogText.clean(bodyOrErrorEvent);
        String message = errorMessage(body);
        Long limit = null;
        boolean tooLong = false;
        for (ResponseRule rule : responseRules) {
            if (rule.trigger().matcher(body).find()) {
                tooLong = true;
                limit = rule.limit() == null ? null : firstNumber(rule.limit(), body);
                break;
            }
        }
        boolean inStream = httpStatus >= 200 && httpStatus < 300;
        String where = inStream ? "error event in a " + httpStatus + " stream" : "HTTP " + httpStatus;
        List<String> evidence = new ArrayList<>();
        evidence.add(where);
        body.lines()
                .filter(l -> !l.isBlank())
                .limit(Diagnosis.MAX_EVIDENCE_LINES - 1)
                .forEach(l -> evidence.add(LogText.head(l, Diagnosis.MAX_LINE_CHARS)));
        String quote = message.isBlank() ? "empty body" : LogText.head(message, DETAIL_QUOTE_CHARS);
        boolean clientSide = httpStatus >= 400 && httpStatus < 500;
        if (tooLong && (clientSide || inStream)) {
            String limitText = limit == null ? "" : " (limit " + fmt(limit) + " tokens)";
            return new Diagnosis(
                    FailureClass.REQUEST_REJECTED,
                    where + ": the server rejected the prompt as too long" + limitText + ": " + quote,
                    evidence,
                    limit,
                    null);
        }
        return new Diagnosis(FailureClass.HTTP_ERROR, where + " from the server: " + quote, evidence, limit, null);
    }

    private Diagnosis matched(StartupRule rule, List<String> lines, int index, int triggerAt, Capacity capacity) {
        Map<Role, Long> numbers = new EnumMap<>(Role.class);
        TreeSet<Integer> sourceLines = new TreeSet<>();
        int focus = triggerAt;
        for (NumberRead read : rule.reads()) {
            if (numbers.containsKey(read.role())) {
                continue;
            }
            NumberAt found = findNumber(read.pattern(), lines, index);
            if (found != null) {
                numbers.put(read.role(), found.value());
                sourceLines.add(found.line());
                // A long refusal is cut for evidence around the capacity it names, the part that matters.
                if (read.role() == Role.HINT && found.line() == index) {
                    focus = found.at();
                }
            }
        }
        Found found = new Found(
                lines.get(index).strip(), numbers.get(Role.HINT), numbers.get(Role.KV), numbers.get(Role.NEED));
        List<String> evidence = evidence(lines, index, focus, sourceLines);
        Long kv = found.kv() != null ? found.kv() : capacity.kvCapacityTokens();
        Long hint = found.hint() != null ? found.hint() : capacity.maxContextHint();
        return new Diagnosis(rule.failureClass(), rule.detail().apply(found), evidence, hint, kv);
    }

    private record NumberAt(long value, int line, int at) {}

    /** Group 1 of {@code pattern} near the failure line, else its latest occurrence anywhere in the log. */
    private static NumberAt findNumber(Pattern pattern, List<String> lines, int index) {
        int end = Math.min(lines.size(), index + WINDOW_BELOW + 1);
        for (int i = index; i < end; i++) {
            Matcher m = pattern.matcher(lines.get(i));
            if (m.find()) {
                return new NumberAt(LogText.parseNumber(m.group(1)), i, m.start());
            }
        }
        for (int i = lines.size() - 1; i >= 0; i--) {
            Matcher m = pattern.matcher(lines.get(i));
            if (m.find()) {
                return new NumberAt(LogText.parseNumber(m.group(1)), i, m.start());
            }
        }
        return null;
    }

    /** The failure line with two lines before and three after, plus the lines the numbers came from. */
    private static List<String> evidence(List<String> lines, int index, int focus, TreeSet<Integer> extra) {
        TreeSet<Integer> picked = new TreeSet<>();
        for (int i = Math.max(0, index - 2); i <= Math.min(lines.size() - 1, index + 3); i++) {
            if (!lines.get(i).isBlank()) {
                picked.add(i);
            }
        }
        picked.addAll(extra);
        List<String> out = new ArrayList<>();
        for (int i : picked) {
            if (out.size() == Diagnosis.MAX_EVIDENCE_LINES) {
                break;
            }
            out.add(LogText.around(lines.get(i), i == index ? focus : 0, Diagnosis.MAX_LINE_CHARS));
        }
        return out;
    }

    private Diagnosis timeout(List<String> lines, Capacity capacity) {
        List<String> tail = tail(lines);
        String last = tail.isEmpty() ? "the log is empty" : "last log line: " + tail.getLast();
        return new Diagnosis(
                FailureClass.STARTUP_TIMEOUT,
                name + " was still not ready when the startup time ran out (" + last
                        + "); raise startup_s if it was still loading",
                tail,
                capacity.maxContextHint(),
                capacity.kvCapacityTokens());
    }

    private Diagnosis crash(int exitCode, List<String> lines, Capacity capacity) {
        int index = -1;
        for (int i = lines.size() - 1; i >= 0 && index < 0; i--) {
            String line = lines.get(i);
            if (MEANINGFUL.matcher(line).find() && !NOT_A_CAUSE.matcher(line).find()) {
                index = i;
            }
        }
        List<String> evidence;
        String cause;
        if (index >= 0) {
            evidence = evidence(lines, index, 0, new TreeSet<>());
            cause = LogText.head(lines.get(index), DETAIL_QUOTE_CHARS);
        } else {
            evidence = tail(lines);
            cause = evidence.isEmpty() ? "the log is empty" : evidence.getLast();
        }
        return new Diagnosis(
                FailureClass.STARTUP_CRASH,
                name + " exited with " + describeExit(exitCode) + " during startup: " + cause,
                evidence,
                capacity.maxContextHint(),
                capacity.kvCapacityTokens());
    }

    private static String describeExit(int exitCode) {
        if (exitCode > 128 && exitCode < 160) {
            int signal = exitCode - 128;
            String hint = signal == 9 ? ", e.g. the kernel's OOM killer" : "";
            return "code " + exitCode + " (killed by signal " + signal + hint + ")";
        }
        return "code " + exitCode;
    }

    private static List<String> tail(List<String> lines) {
        List<String> out = new ArrayList<>();
        for (int i = lines.size() - 1; i >= 0 && out.size() < Diagnosis.MAX_EVIDENCE_LINES; i--) {
            if (!lines.get(i).isBlank()) {
                out.addFirst(LogText.head(lines.get(i), Diagnosis.MAX_LINE_CHARS));
            }
        }
        return out;
    }

    private static Long firstNumber(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        return m.find() ? LogText.parseNumber(m.group(1)) : null;
    }

    /** The human message of an error answer: {@code error.message}, {@code error}, {@code message} or {@code detail}. */
    private static String errorMessage(String body) {
        String json = body.strip();
        if (json.startsWith("data:")) {
            json = json.substring("data:".length()).strip();
        }
        if (json.startsWith("{")) {
            try {
                JsonNode root = JSON.readTree(json);
                JsonNode error = root.path("error");
                for (JsonNode candidate :
                        List.of(error.path("message"), error, root.path("message"), root.path("detail"))) {
                    if (candidate.isString() && !candidate.stringValue().isBlank()) {
                        return candidate.stringValue().strip();
                    }
                }
            } catch (JacksonException notJson) {
                // Some servers answer errors as plain text or cut JSON; the raw text is then the message.
                return firstLine(body);
            }
        }
        return firstLine(body);
    }

    private static String firstLine(String body) {
        return body.lines().filter(l -> !l.isBlank()).findFirst().orElse("").strip();
    }
}
