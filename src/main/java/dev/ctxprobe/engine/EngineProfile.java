package dev.ctxprobe.engine;

import static dev.ctxprobe.engine.LogText.fmt;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.ServedCapacity;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
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
 * log lines and error answers into failure classes and capacity numbers. Profiles are built with {@link
 * ProfileBuilder}, one file per engine in {@code dev.ctxprobe.engines}; nothing here launches or talks to anything:
 * what a running server states is read through a function the caller gives ({@link #statedCapacity}), so every
 * rule is tested on recorded texts.
 *
 * @param readinessPath the GET path that answers 200 once the server is ready
 * @param readyLines texts the engine prints once it serves: a hint to probe readiness at once, never proof of it
 * @param hintKind what a capacity named by this engine limits, unless its rule says otherwise
 * @param promptRule the largest prompt accepted with one output token, given the configured context length
 * @param tokenRange token ids safe to use as prompt filler when the server does not name its vocabulary
 * @param emptyAnswerMeansTooLong true when an over-long prompt gets an empty 200 (LMDeploy) instead of an error
 * @param kvCapacitySteers true when the KV capacity the log names bounds a request, so the search may follow it;
 *     false for vLLM, whose {@code GPU KV cache size} is {@code max_concurrency * max_model_len} for hybrid and
 *     DeepSeek-V4 models rather than a pool size
 * @param stated how to read what a running server states about its own limits
 * @param advice the engine's own words for the limits it imposes
 * @param autoLength the value of {@code {max_model_len}} that lets the engine fit its context to memory itself
 *     ({@code auto} for vLLM), or null when it cannot
 * @param tokenizer how the engine's {@code POST /tokenize} is asked, for a pass-key prompt of exact length; null for
 *     an engine that has none
 * @param fatalTexts texts that name a cause the server does not recover from, besides the startup rules' triggers
 *     (which are fatal too): seen during startup, they start {@code timeouts.fatal_grace_s} (docs/failures.md)
 * @param tracebacks true for an engine written in Python, whose uncaught exception's last traceback line is fatal
 * @param progress where a live server shows its progress on the requests it holds, or null where it shows none
 * @param preempts true when the engine may take a running request's KV cells to give to others and compute its
 *     prefill again later (vLLM, SGLang); llama.cpp never does: a full cache ends the request with an error, so a
 *     pause in its decode is another slot's prompt batch (docs/search.md#held-at-once)
 * @param statedBeforeSearch true when an endpoint already running is asked what it states before the search's first
 *     step, so that no step goes above the limit it states (docs/engines.md, openai)
 */
public record EngineProfile(
        String name,
        String readinessPath,
        List<String> readyLines,
        HintKind hintKind,
        LongUnaryOperator promptRule,
        TokenRange tokenRange,
        boolean emptyAnswerMeansTooLong,
        boolean kvCapacitySteers,
        List<CapacityRule> capacityRules,
        List<StartupRule> startupRules,
        List<ResponseRule> responseRules,
        Stated stated,
        Advice advice,
        String autoLength,
        ServerTokenizer.Api tokenizer,
        List<Pattern> fatalTexts,
        boolean tracebacks,
        Progress progress,
        boolean preempts,
        boolean statedBeforeSearch) {

    /** A wrapped refusal may continue on the next lines; numbers are looked for this far below the match. */
    private static final int WINDOW_BELOW = 3;

    private static final int DETAIL_QUOTE_CHARS = 200;
    // A vocabulary smaller than this is no real model's: such a figure is ignored.
    private static final int MIN_VOCABULARY = 16;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern MEANINGFUL =
            LogText.pattern("error|exception|fatal|abort|panic|killed|segmentation fault|core dumped|failed|traceback");
    // Lines that announce an error without naming it, or that every exit prints (llama.cpp's abort after its HTTP
    // thread started, its clean-up, its summary, and -fit's warning that it gave up): the cause is elsewhere.
    private static final Pattern NOT_A_CAUSE =
            LogText.pattern("traceback \\(most recent call last\\)|see root cause above"
                    + "|terminate called without an active exception|cleaning up before exit|exiting due to model loading error"
                    + "|common_fit_params: failed to fit|encountered an error while trying to fit"
                    // A debugger's backtrace of an abort (ggml prints one through gdb where gdb is installed).
                    + "|^#\\d+\\s+0x|^\\[inferior \\d+|libthread_db|in ggml_abort");
    // A failed internal check names the cause of an abort, whatever is printed after it.
    private static final Pattern FAILED_CHECK =
            LogText.pattern("GGML_ASSERT\\(.*\\) failed|GGML_ABORT|assertion .* failed|Assertion `.*' failed");
    static final int SIGABRT_EXIT = 134;
    /** Who sends a SIGKILL, as far as the log can tell; a launcher that knows more says which. */
    public static final String SIGKILL_CAUSES = "the kernel's OOM killer or an operator";
    // A log that names an accelerator: failures there are about accelerator memory, elsewhere about memory.
    private static final Pattern ACCELERATOR =
            LogText.pattern("cuda|gpu|rocm|\\bhip\\b|\\bxpu|\\bnpu|vulkan|\\bmetal\\b|sycl|ascend|kunlun");

    public EngineProfile {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(readinessPath, "readinessPath");
        Objects.requireNonNull(hintKind, "hintKind");
        Objects.requireNonNull(promptRule, "promptRule");
        Objects.requireNonNull(tokenRange, "tokenRange");
        Objects.requireNonNull(stated, "stated");
        Objects.requireNonNull(advice, "advice");
        readyLines = List.copyOf(readyLines);
        capacityRules = List.copyOf(capacityRules);
        startupRules = List.copyOf(startupRules);
        responseRules = List.copyOf(responseRules);
        fatalTexts = List.copyOf(fatalTexts);
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
        NEED,
        /** The size of the allocation that failed, in MB (the integer part). */
        MB
    }

    /**
     * A number to read for a startup failure: group 1 of {@code pattern}, looked for near the failure line
     * first, then anywhere in the log (the latest occurrence); it fills each of {@code roles} not filled yet.
     */
    public record NumberRead(List<Role> roles, Pattern pattern) {
        public NumberRead {
            roles = List.copyOf(roles);
        }
    }

    /**
     * What a startup rule found: the line, the numbers read for it (null when absent), and the words for the
     * memory concerned ({@code accelerator memory} when the log names an accelerator, else {@code memory}).
     */
    public record Found(String line, Long hint, Long kv, Long need, Long mb, String memory) {}

    /**
     * A startup failure: a short stable {@code trigger} found in one log line means {@code failureClass};
     * {@code detail} writes the sentence from what was found. {@code hintKind} is what the hint limits when that
     * differs from the profile's kind (SGLang's model limit on context_length), else null.
     */
    public record StartupRule(
            FailureClass failureClass,
            Pattern trigger,
            List<NumberRead> reads,
            Function<Found, String> detail,
            HintKind hintKind) {
        public StartupRule {
            reads = List.copyOf(reads);
        }
    }

    /**
     * A request refused because the prompt is too long: {@code trigger} found in the answer; group 1 of
     * {@code limit} (found anywhere in the answer, may be null) is the limit the engine names, which limits
     * {@code hintKind} (null: the profile's kind).
     */
    public record ResponseRule(Pattern trigger, Pattern limit, HintKind hintKind) {}

    /** Which stated number a log line or an endpoint gives. */
    public enum StatedField {
        CONTEXT,
        MAX_PROMPT,
        KV,
        SLOTS,
        KV_UNIFIED,
        TRAIN_CONTEXT,
        VOCAB,
        REDUCED_FROM,
        CAPPED_AT,
        BUILD,
        MAX_CONCURRENCY,
        MAX_RUNNING
    }

    /** A startup log line that states a limit: group 1 of {@code pattern} is the value. */
    public record StatedLine(Pattern pattern, StatedField field) {}

    /** An endpoint to ask after readiness: its body (null when it gave none) read into what the server states. */
    public record StatedEndpoint(String path, Function<String, ServedCapacity> read) {}

    /**
     * How a profile learns what a running server states.
     *
     * @param endpoints asked in order; an earlier endpoint's number wins over a later one's and over the log's
     * @param lines startup log lines; for each the latest wins
     * @param promptFromContext the longest prompt for a stated context, when the server states no prompt limit
     * @param kind what the stated limit bounds for the search: the context of a server launched for a length
     *     (vLLM: its memory answers max_model_len) or the prompt (llama.cpp, SGLang: the running server's limit)
     * @param slack how far a stated prompt limit may lie from the one the configured length gives and still be
     *     only that configuration read back (llama.cpp rounds -c up to 256; SGLang keeps a few tokens)
     */
    public record Stated(
            List<StatedEndpoint> endpoints,
            List<StatedLine> lines,
            LongUnaryOperator promptFromContext,
            HintKind kind,
            long slack) {
        public Stated {
            endpoints = List.copyOf(endpoints);
            lines = List.copyOf(lines);
        }

        static final Stated NOTHING = new Stated(List.of(), List.of(), n -> n - 1, HintKind.MAX_MODEL_LEN, 0);
    }

    /**
     * The engine's words for the limits it imposes, each a sentence or null where it has none.
     *
     * @param slots {@code String.format} with the number of slots and the tokens each holds
     * @param capped with the training context the slot context was capped at
     * @param reduced with the context the engine lowered from and the one it chose
     * @param truncation what to do when the engine truncated a prompt instead of refusing it
     * @param truncationLog the log line that shows the truncation, or null
     * @param kvFullLog the log line of a KV cache that was full while serving and retried with a smaller batch (the
     *     requests were then not all held at once), or null
     * @param slotsOld {@code slots} for builds up to {@code oldThrough}, which lack a flag the advice names; null
     * @param oldThrough the newest build known to need {@code slotsOld}
     */
    public record Advice(
            String slots,
            String capped,
            String reduced,
            String truncation,
            Pattern truncationLog,
            Pattern kvFullLog,
            String slotsOld,
            long oldThrough) {
        static final Advice NONE = new Advice(null, null, null, null, null, null, null, 0);
    }

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
        Long context = found.get(CapacityField.MAX_CONTEXT);
        return new Capacity(found.get(CapacityField.KV_CAPACITY), context == null ? null : new Limit(context, null));
    }

    /**
     * Why the server did not become ready. {@code exitCode} is null when it was still running at the startup
     * deadline.
     */
    public Optional<Diagnosis> diagnoseStartup(Integer exitCode, List<String> logLines) {
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
     * Whether {@code line} names a cause this engine does not recover from: a startup rule's trigger or one of its
     * fatal texts. A traceback's last line is told by {@link FatalLines}, which sees the lines before it.
     */
    public boolean isFatal(String line) {
        String clean = LogText.clean(line);
        for (StartupRule rule : startupRules) {
            if (rule.trigger().matcher(clean).find()) {
                return true;
            }
        }
        for (Pattern p : fatalTexts) {
            if (p.matcher(clean).find()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Why a server that printed {@code fatalLine} and then did not become ready within its grace failed: the class
     * of a startup rule found in the log (the root cause a traceback names may come before or after the fatal line),
     * else {@code startup_crash} with that line as its cause.
     */
    public Diagnosis diagnoseFatal(String fatalLine, List<String> logLines) {
        List<String> lines = logLines.stream().map(LogText::clean).toList();
        Capacity capacity = readCapacity(lines);
        for (StartupRule rule : startupRules) {
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = rule.trigger().matcher(lines.get(i));
                if (m.find()) {
                    return matched(rule, lines, i, m.start(), capacity);
                }
            }
        }
        String clean = LogText.clean(fatalLine).strip();
        int index = lines.lastIndexOf(clean);
        for (int i = lines.size() - 1; i >= 0 && index < 0; i--) {
            if (lines.get(i).strip().equals(clean)) {
                index = i;
            }
        }
        List<String> evidence = index >= 0 ? evidence(lines, index, 0, new TreeSet<>()) : List.of(clean);
        return new Diagnosis(
                FailureClass.STARTUP_CRASH,
                name + " printed a fatal error during startup: "
                        + LogText.head(LogText.withoutStamp(clean), DETAIL_QUOTE_CHARS),
                evidence,
                capacity);
    }

    /**
     * Why a request failed: {@code request_rejected} when a 4xx answer (or an error event inside a 200
     * stream) says the prompt is too long, else {@code http_error}.
     */
    public Diagnosis diagnoseResponse(int httpStatus, String bodyOrErrorEvent) {
        String body = bodyOrErrorEvent == null ? "" : LogText.clean(bodyOrErrorEvent);
        String message = errorMessage(body);
        Long limit = null;
        HintKind kind = null;
        boolean tooLong = false;
        for (ResponseRule rule : responseRules) {
            if (rule.trigger().matcher(body).find()) {
                tooLong = true;
                limit = rule.limit() == null ? null : firstNumber(rule.limit(), body);
                kind = limit == null ? null : rule.hintKind();
                break;
            }
        }
        Capacity named = new Capacity(null, limit == null ? null : new Limit(limit, kind));
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
            // A prompt-length hint is a number the prompt must stay below: said as the longest prompt, the same
            // number the stated limit before sending gives, never as a second figure for one limit.
            String limitText = limit == null
                    ? ""
                    : kind == HintKind.PROMPT_LEN
                            ? " (the longest prompt it takes is " + fmt(limit - 1) + " tokens)"
                            : " (limit " + fmt(limit) + " tokens)";
            return new Diagnosis(
                    FailureClass.REQUEST_REJECTED,
                    where + ": the server rejected the prompt as too long" + limitText + ": " + quote,
                    evidence,
                    named);
        }
        return new Diagnosis(
                FailureClass.HTTP_ERROR,
                where + " from the server: " + quote
                        + (OUT_OF_VOCABULARY.matcher(message).find()
                                ? "; the prompt's token ids are not all in the model's vocabulary: set the backend's"
                                        + " token_ids to ids it has (docs/experiment-file.md, backends)"
                                : ""),
                evidence,
                named);
    }

    /** What servers say of a token id the model does not have: llama-server, ctxprobe serve, vLLM's tokenizer. */
    private static final Pattern OUT_OF_VOCABULARY = Pattern.compile(
            "(?i)invalid tokens?\\b|out of vocabulary|token id[^.]*out of range|token_ids? .*(?:exceed|out of range)");

    private Diagnosis matched(StartupRule rule, List<String> lines, int index, int triggerAt, Capacity capacity) {
        Map<Role, Long> numbers = new EnumMap<>(Role.class);
        TreeSet<Integer> sourceLines = new TreeSet<>();
        int focus = triggerAt;
        for (NumberRead read : rule.reads()) {
            List<Role> open =
                    read.roles().stream().filter(r -> !numbers.containsKey(r)).toList();
            if (open.isEmpty()) {
                continue;
            }
            NumberAt found = findNumber(read.pattern(), lines, index);
            if (found != null) {
                open.forEach(r -> numbers.put(r, found.value()));
                sourceLines.add(found.line());
                // A long refusal is cut for evidence around the capacity it names, the part that matters.
                if (open.contains(Role.HINT) && found.line() == index) {
                    focus = found.at();
                }
            }
        }
        Found found = new Found(
                lines.get(index).strip(),
                numbers.get(Role.HINT),
                numbers.get(Role.KV),
                numbers.get(Role.NEED),
                numbers.get(Role.MB),
                memoryWords(lines));
        List<String> evidence = evidence(lines, index, focus, sourceLines);
        // A hint read from a capacity line limits what the profile's hints limit; only the rule's own number may
        // limit something else.
        Capacity named = capacity.merge(
                new Capacity(found.kv(), found.hint() == null ? null : new Limit(found.hint(), rule.hintKind())));
        return new Diagnosis(rule.failureClass(), rule.detail().apply(found), evidence, named);
    }

    /** {@code accelerator memory} when the log names an accelerator, else {@code memory}: a CPU build has no other. */
    static String memoryWords(List<String> lines) {
        for (String line : lines) {
            if (ACCELERATOR.matcher(line).find()) {
                return "accelerator memory";
            }
        }
        return "memory";
    }

    /**
     * What the running server states about its limits: each endpoint's answer ({@code get} gives the body of a GET
     * that answered 200, else null), then the startup log. The longest prompt follows from the context by the
     * engine's rule where no endpoint names it.
     */
    public ServedCapacity statedCapacity(List<String> logLines, Function<String, String> get) {
        ServedCapacity found = ServedCapacity.NONE;
        for (StatedEndpoint endpoint : stated.endpoints()) {
            String body = get.apply(endpoint.path());
            if (body != null) {
                found = found.or(endpoint.read().apply(body).from("GET " + endpoint.path()));
            }
        }
        found = found.or(statedInLog(logLines));
        if (found.maxPromptTokens() == null && found.contextTokens() != null) {
            found = found.withMaxPrompt(Math.max(0, stated.promptFromContext().applyAsLong(found.contextTokens())));
        }
        return found;
    }

    /** What the startup log states; for each field the latest line wins. */
    ServedCapacity statedInLog(List<String> logLines) {
        Map<StatedField, String> values = new EnumMap<>(StatedField.class);
        for (String raw : logLines) {
            String line = LogText.clean(raw);
            for (StatedLine rule : stated.lines()) {
                Matcher m = rule.pattern().matcher(line);
                if (m.find()) {
                    values.put(rule.field(), m.group(1));
                }
            }
        }
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        values.forEach((field, value) -> {
            switch (field) {
                case CONTEXT -> b.context = LogText.parseNumber(value);
                case MAX_PROMPT -> b.maxPrompt = LogText.parseNumber(value);
                case KV -> b.kv = LogText.parseNumber(value);
                case SLOTS -> b.slots = Math.toIntExact(LogText.parseNumber(value));
                case KV_UNIFIED -> b.kvUnified = Boolean.parseBoolean(value);
                case TRAIN_CONTEXT -> b.train = LogText.parseNumber(value);
                case VOCAB -> b.vocab = Math.toIntExact(LogText.parseNumber(value));
                case REDUCED_FROM -> b.reducedFrom = LogText.parseNumber(value);
                case CAPPED_AT -> b.cappedAt = LogText.parseNumber(value);
                case BUILD -> b.build = LogText.parseNumber(value);
                case MAX_CONCURRENCY -> b.maxConcurrency = Double.parseDouble(value.replace(",", ""));
                case MAX_RUNNING -> b.maxRunning = Math.toIntExact(LogText.parseNumber(value));
            }
        });
        return b.build("log");
    }

    /**
     * The stated capacity as a search hint, or empty when it is only the configured length read back ({@code
     * maxModelLen}, within the engine's rounding): a server that states what it was told to be teaches nothing. A
     * server that sized itself ({@code selfSized}: launched with {@link #autoLength}) always teaches.
     */
    public Optional<Limit> capacityHint(ServedCapacity c, long maxModelLen, boolean selfSized) {
        Long tokens = stated.kind() == HintKind.MAX_MODEL_LEN
                ? c.contextTokens()
                : c.maxPromptTokens() == null ? null : c.maxPromptTokens() + promptAllowance();
        if (tokens == null) {
            return Optional.empty();
        }
        if (!selfSized && c.maxPromptTokens() != null && maxModelLen > 0) {
            long configured = largestPrompt(maxModelLen);
            if (Math.abs(c.maxPromptTokens() - configured) <= stated.slack()) {
                return Optional.empty();
            }
        }
        return Optional.of(new Limit(tokens, stated.kind()));
    }

    /** How far below a prompt-length hint the largest accepted prompt lies, by the engine's own rule. */
    public long promptAllowance() {
        long reference = 1L << 20;
        return reference - largestPrompt(reference);
    }

    /**
     * Why the server's limit is below what {@code maxModelLen} asked for, in the engine's words (its slots split
     * the context, the model's training context capped it, the engine lowered it to fit memory), or empty.
     */
    public Optional<String> explainLimit(ServedCapacity c, long maxModelLen) {
        List<String> why = new ArrayList<>();
        Long context = c.contextTokens();
        if (advice.slots() != null
                && c.slots() != null
                && c.slots() > 1
                && !Boolean.TRUE.equals(c.kvUnified())
                && context != null
                && context < maxModelLen) {
            boolean old = advice.slotsOld() != null && c.build() != null && c.build() <= advice.oldThrough();
            why.add(String.format(Locale.ROOT, old ? advice.slotsOld() : advice.slots(), c.slots(), context));
        }
        Long cap = c.cappedAt() != null ? c.cappedAt() : c.trainContextTokens();
        if (advice.capped() != null && cap != null && context != null && context.equals(cap) && maxModelLen > context) {
            Long train = c.trainContextTokens();
            String scaled = train != null && cap > train
                    ? String.format(
                            Locale.ROOT, " (the training context %,d, scaled by the rope scaling asked for)", train)
                    : " (the model's training context, n_ctx_train)";
            why.add(String.format(Locale.ROOT, advice.capped(), cap) + scaled);
        }
        if (advice.reduced() != null && c.reducedFrom() != null && context != null && context < c.reducedFrom()) {
            why.add(String.format(Locale.ROOT, advice.reduced(), c.reducedFrom(), context));
        }
        return why.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", why));
    }

    /** The prompt ids: inside the vocabulary the server named, else the profile's range. */
    public TokenRange tokenRange(ServedCapacity c) {
        return c.vocabSize() != null && c.vocabSize() >= MIN_VOCABULARY
                ? TokenRange.forVocabulary(c.vocabSize())
                : tokenRange;
    }

    /** What to do when the engine truncated a prompt, in its own words, or null. */
    public String truncationAdvice() {
        return advice.truncation();
    }

    /** The log lines that show a truncation (llama.cpp's {@code input truncated}), at most a few. */
    /**
     * A warning when the log shows the KV cache full while serving (llama.cpp with a unified cache retries with a
     * smaller batch: every request is answered, but they were not held at once), else empty.
     */
    public Optional<String> kvFullWarning(List<String> logLines) {
        if (advice.kvFullLog() == null) {
            return Optional.empty();
        }
        List<String> seen = logLines.stream()
                .map(LogText::clean)
                .filter(l -> advice.kvFullLog().matcher(l).find())
                .toList();
        if (seen.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(String.format(
                Locale.ROOT,
                "the server's KV cache was full %,d time%s while serving (%s): it answered in smaller batches, so the"
                        + " requests were not all held at once",
                seen.size(),
                seen.size() == 1 ? "" : "s",
                LogText.head(LogText.withoutStamp(seen.getFirst()).strip(), DETAIL_QUOTE_CHARS)));
    }

    public List<String> truncationEvidence(List<String> logLines) {
        if (advice.truncationLog() == null) {
            return List.of();
        }
        return logLines.stream()
                .map(LogText::clean)
                .filter(l -> advice.truncationLog().matcher(l).find())
                .map(l -> LogText.head(l, Diagnosis.MAX_LINE_CHARS))
                .limit(3)
                .toList();
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
                capacity);
    }

    private Diagnosis crash(int exitCode, List<String> lines, Capacity capacity) {
        int index = firstMatch(FAILED_CHECK, lines);
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
            // The last line the server printed shows how far it got (loading the model, creating the context):
            // with no cause named, that and the command itself are what the user has to go on.
            cause = evidence.stream()
                    .filter(l -> !NOT_A_CAUSE.matcher(l).find())
                    .reduce((first, second) -> second)
                    .map(l -> "the log names no cause; its last line: "
                            + LogText.head(LogText.withoutStamp(l).strip(), DETAIL_QUOTE_CHARS)
                            + "; run the command by hand to see what it prints")
                    .orElse(evidence.isEmpty() ? "the log is empty" : "the log names no cause");
        }
        return new Diagnosis(
                FailureClass.STARTUP_CRASH,
                name + " " + describeExit(exitCode) + " during startup: " + cause,
                evidence,
                capacity);
    }

    private static int firstMatch(Pattern pattern, List<String> lines) {
        for (int i = 0; i < lines.size(); i++) {
            if (pattern.matcher(lines.get(i)).find()) {
                return i;
            }
        }
        return -1;
    }

    private static String describeExit(int exitCode) {
        if (exitCode == SIGABRT_EXIT) {
            return "aborted (exit code 134, signal 6)";
        }
        if (exitCode > 128 && exitCode < 160) {
            int signal = exitCode - 128;
            // SIGKILL comes from outside: the kernel's OOM killer or an operator; nothing in the log tells which.
            String hint = signal == 9 ? ": " + SIGKILL_CAUSES : "";
            return "was killed (exit code " + exitCode + ", signal " + signal + hint + ")";
        }
        return "exited with code " + exitCode;
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
