package dev.ctxprobe.engine;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.EngineProfile.Advice;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.CapacityRule;
import dev.ctxprobe.engine.EngineProfile.Found;
import dev.ctxprobe.engine.EngineProfile.NumberRead;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StartupRule;
import dev.ctxprobe.engine.EngineProfile.Stated;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.EngineProfile.StatedField;
import dev.ctxprobe.engine.EngineProfile.StatedLine;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Collects one engine's profile, and the rules every engine shares: the common rules go after the engine's own so
 * that specific texts win. The engines themselves are defined in {@code dev.ctxprobe.engines}, one file each.
 */
public final class ProfileBuilder {
    /** A number as engines print it, plain or with thousands separators: group 1. */
    public static final String NUM = LogText.NUM;

    /** The model list of an OpenAI-compatible server. */
    public static final String MODELS = "/v1/models";

    /** The largest prompt of most engines: the context less the one output token. */
    public static final LongUnaryOperator MINUS_ONE = n -> n - 1;

    private static final String HEALTH = "/health";

    // Any engine, any version: the answer says the input is too long but names no number we know.
    private static final ResponseRule TOO_LONG = new ResponseRule(
            LogText.pattern("too long|too many tokens|longer than|exceeds?\\b[^.]{0,40}\\b(context|length|max_model_len"
                    + "|max_seq_len|session_len)|context (length|size|window)"),
            null,
            null);

    // ---- startup failures every engine can show ----
    private static final List<StartupRule> COMMON_STARTUP = List.of(
            rule(
                    FailureClass.OOM_STARTUP,
                    "(cuda|hip|xpu|npu) out of memory|OutOfMemoryError|capture cuda graph failed|bad_alloc"
                            + "|failed to allocate compute pp buffers|cudaMalloc failed|cudaErrorMemoryAllocation",
                    List.of(),
                    f -> "ran out of " + f.memory() + " while loading or capturing graphs (" + quote(f)
                            + "); lower the context length or the memory fraction, or use more devices"),
            rule(
                    FailureClass.CONFIG_REJECTED,
                    ": error: argument|error: unrecognized arguments|invalid int value|invalid choice:"
                            + "|error: unexpected argument|error: invalid value|error: invalid argument"
                            + "|error while handling argument",
                    List.of(),
                    f -> "the engine rejected its arguments (" + quote(f) + "); fix the command line"),
            rule(
                    FailureClass.PORT_BUSY,
                    "address already in use|couldn't bind HTTP server socket",
                    List.of(),
                    f -> "the port was taken by another process after ctxprobe checked it (" + quote(f)
                            + "); stop that process or leave port unset so that ctxprobe picks a free one"));

    /**
     * Errors of the collective and of the device that no engine recovers from: a tensor-parallel worker that logs one
     * leaves the others waiting in a collective, so the server neither serves nor exits (docs/failures.md).
     */
    private static final List<String> COMMON_FATAL = List.of(
            "NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidUsage|ncclRemoteError",
            "CUDA error: ");

    /**
     * What the engines print when they have just started serving: llama-server, vLLM's and LMDeploy's uvicorn,
     * SGLang, TGI's router. Every launching profile watches for all of them: a line is only a hint to probe at once,
     * and engines share servers (uvicorn) and wrappers, so a text of another engine costs at most one early probe.
     */
    private static final List<String> READY_LINES = List.of(
            "server is listening on",
            "Application startup complete",
            "Uvicorn running on",
            "The server is fired up and ready to roll",
            "Connected");

    private final String name;
    private final HintKind hintKind;
    private final LongUnaryOperator promptRule;
    private String readinessPath = HEALTH;
    private TokenRange tokenRange = TokenRange.DEFAULT;
    private boolean emptyAnswerMeansTooLong;
    private boolean kvCapacitySteers = true;
    private boolean preempts = true;
    private String autoLength;
    private ServerTokenizer.Api tokenizer;
    private boolean statedBeforeSearch;
    private Advice advice = Advice.NONE;
    private Stated stated = Stated.NOTHING;
    private final List<CapacityRule> capacity = new ArrayList<>();
    private final List<StatedLine> statedLines = new ArrayList<>();
    private final List<StartupRule> startup = new ArrayList<>();
    private final List<ResponseRule> responses = new ArrayList<>();
    private final List<Pattern> fatal =
            new ArrayList<>(COMMON_FATAL.stream().map(LogText::pattern).toList());
    private boolean tracebacks;
    private Progress progress;

    private ProfileBuilder(String name, HintKind hintKind, LongUnaryOperator promptRule) {
        this.name = name;
        this.hintKind = hintKind;
        this.promptRule = promptRule;
    }

    /** An engine's texts: its hints limit {@code hintKind}; {@code promptRule} gives its largest prompt. */
    public static ProfileBuilder server(String name, HintKind hintKind, LongUnaryOperator promptRule) {
        return new ProfileBuilder(name, hintKind, promptRule);
    }

    public ProfileBuilder readiness(String path) {
        readinessPath = Objects.requireNonNull(path, "path");
        return this;
    }

    public ProfileBuilder tokens(TokenRange range) {
        tokenRange = Objects.requireNonNull(range, "range");
        return this;
    }

    public ProfileBuilder emptyAnswerMeansTooLong() {
        emptyAnswerMeansTooLong = true;
        return this;
    }

    /** The engine never preempts a running request (llama.cpp, the embedded engine). */
    public ProfileBuilder neverPreempts() {
        preempts = false;
        return this;
    }

    public ProfileBuilder kvCapacityDoesNotSteer() {
        kvCapacitySteers = false;
        return this;
    }

    public ProfileBuilder autoLength(String value) {
        autoLength = value;
        return this;
    }

    /** How the engine's {@code POST /tokenize} is asked; an engine without one cannot run a pass-key check. */
    public ProfileBuilder tokenizer(ServerTokenizer.Api api) {
        tokenizer = api;
        return this;
    }

    /** An endpoint already running is asked what it states before the search's first step. */
    public ProfileBuilder statedBeforeSearch() {
        statedBeforeSearch = true;
        return this;
    }

    public ProfileBuilder advice(Advice words) {
        advice = Objects.requireNonNull(words, "words");
        return this;
    }

    /**
     * What the running server states; each line rule is {@code FIELD:regex}, group 1 the value. Lines that also name
     * a capacity are given with {@link #capacity(CapacityField, StatedField, String)} instead, so that each text is
     * registered once.
     */
    public ProfileBuilder stated(
            HintKind kind,
            long slack,
            LongUnaryOperator promptFromContext,
            List<StatedEndpoint> endpoints,
            List<String> lines) {
        for (String line : lines) {
            int colon = line.indexOf(':');
            statedLines.add(new StatedLine(
                    LogText.pattern(line.substring(colon + 1)), StatedField.valueOf(line.substring(0, colon))));
        }
        stated = new Stated(endpoints, List.of(), promptFromContext, kind, slack);
        return this;
    }

    /** A startup log line that names a capacity: group 1 of {@code regex} is the number. */
    public ProfileBuilder capacity(CapacityField field, String regex) {
        return capacity(field, LogText.pattern(regex));
    }

    /** A startup log line that names a capacity, whose pattern a failure rule reads too. */
    public ProfileBuilder capacity(CapacityField field, Pattern pattern) {
        capacity.add(new CapacityRule(pattern, field));
        return this;
    }

    /** A log line that names a capacity at startup and is also what the running server states as {@code as}. */
    public ProfileBuilder capacity(CapacityField field, StatedField as, String regex) {
        Pattern p = LogText.pattern(regex);
        capacity.add(new CapacityRule(p, field));
        statedLines.add(new StatedLine(p, as));
        return this;
    }

    public ProfileBuilder startup(StartupRule rule) {
        startup.add(rule);
        return this;
    }

    /**
     * Texts that name a cause the engine does not recover from, besides its startup rules' triggers: seen during
     * startup, the server has {@code timeouts.fatal_grace_s} to become ready or is stopped (docs/failures.md). Only
     * texts of errors, never of warnings the engine survives: each is tested on the engine's real lines.
     */
    public ProfileBuilder fatal(String... regexes) {
        for (String r : regexes) {
            fatal.add(LogText.pattern(r));
        }
        return this;
    }

    /** A Python engine: the last line of an uncaught exception's traceback is fatal (see {@link FatalLines}). */
    public ProfileBuilder tracebacks() {
        tracebacks = true;
        return this;
    }

    /** Where a live server shows its progress on the requests it holds (docs/failures.md). */
    public ProfileBuilder progress(Progress where) {
        progress = where;
        return this;
    }

    public ProfileBuilder reject(ResponseRule... rules) {
        responses.addAll(List.of(rules));
        return this;
    }

    /** The profile, with the rules every engine shares after its own. */
    public EngineProfile build() {
        List<StartupRule> startupRules =
                Stream.concat(startup.stream(), COMMON_STARTUP.stream()).toList();
        List<ResponseRule> responseRules =
                Stream.concat(responses.stream(), Stream.of(TOO_LONG)).toList();
        Stated withLines =
                new Stated(stated.endpoints(), statedLines, stated.promptFromContext(), stated.kind(), stated.slack());
        return new EngineProfile(
                name,
                readinessPath,
                READY_LINES,
                hintKind,
                promptRule,
                tokenRange,
                emptyAnswerMeansTooLong,
                kvCapacitySteers,
                capacity,
                startupRules,
                responseRules,
                withLines,
                advice,
                autoLength,
                tokenizer,
                fatal,
                tracebacks,
                progress,
                preempts,
                statedBeforeSearch);
    }

    /** A startup failure whose hint, if any, limits what the profile's hints limit. */
    public static StartupRule rule(
            FailureClass failureClass, String trigger, List<NumberRead> reads, Function<Found, String> detail) {
        return rule(failureClass, trigger, reads, detail, null);
    }

    /** A startup failure whose hint limits {@code hintKind}. */
    public static StartupRule rule(
            FailureClass failureClass,
            String trigger,
            List<NumberRead> reads,
            Function<Found, String> detail,
            HintKind hintKind) {
        return new StartupRule(failureClass, LogText.pattern(trigger), reads, detail, hintKind);
    }

    /** A number to read near a startup failure, group 1 of {@code regex}, for one role or more. */
    public static NumberRead read(String regex, Role... roles) {
        return read(LogText.pattern(regex), roles);
    }

    /** A number to read near a startup failure with a pattern the profile also reads elsewhere. */
    public static NumberRead read(Pattern pattern, Role... roles) {
        return new NumberRead(List.of(roles), pattern);
    }

    /** A refusal whose text names the limit in group 1. */
    public static ResponseRule reject(String triggerWithLimit) {
        Pattern p = LogText.pattern(triggerWithLimit);
        return new ResponseRule(p, p, null);
    }

    /** A refusal found by {@code trigger}, whose limit is group 1 of {@code limit}. */
    public static ResponseRule reject(String trigger, String limit) {
        return new ResponseRule(LogText.pattern(trigger), LogText.pattern(limit), null);
    }

    /** A refusal found by {@code trigger}, whose limit is group 1 of {@code limit} and limits {@code kind}. */
    public static ResponseRule reject(String trigger, String limit, HintKind kind) {
        return new ResponseRule(LogText.pattern(trigger), LogText.pattern(limit), kind);
    }

    /** A refusal whose text names, in group 1, a limit on what {@code kind} says. */
    public static ResponseRule reject(String triggerWithLimit, HintKind kind) {
        Pattern p = LogText.pattern(triggerWithLimit);
        return new ResponseRule(p, p, kind);
    }

    /** A text to find in a log line or an answer, as every rule matches: case-insensitively. */
    public static Pattern pattern(String regex) {
        return LogText.pattern(regex);
    }

    /** A number for a sentence: {@code 131,072}, or {@code ?} when it was not found. */
    public static String fmt(Long n) {
        return LogText.fmt(n);
    }

    /** The failure line, without its time stamp and cut short, for a sentence. */
    public static String quote(Found found) {
        return LogText.head(LogText.withoutStamp(found.line()), 160);
    }

    /** {@code for a context of N tokens} when the context was read, for a sentence. */
    public static String context(Found f) {
        return f.need() == null ? "" : " for a context of " + fmt(f.need()) + " tokens";
    }

    /** {@code (N MB)} when the failed allocation's size was read, for a sentence. */
    public static String size(Found f) {
        return f.mb() == null ? "" : " (" + fmt(f.mb()) + " MB)";
    }
}
