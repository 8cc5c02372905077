package dev.ctxprobe.engine;

import static dev.ctxprobe.engine.LogText.NUM;
import static dev.ctxprobe.engine.LogText.fmt;
import static dev.ctxprobe.engine.LogText.pattern;

import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.CapacityRule;
import dev.ctxprobe.engine.EngineProfile.Found;
import dev.ctxprobe.engine.EngineProfile.NumberRead;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StartupRule;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;
import java.util.stream.Stream;

/**
 * The known engine profiles, each defined once below. Adding an engine means adding one entry here; the
 * client and the search only see {@link EngineProfile}.
 */
public final class EngineProfiles {

    private static final String HEALTH = "/health";
    private static final String MODELS = "/v1/models";
    private static final TokenRange DEFAULT_TOKENS = TokenRange.DEFAULT;
    private static final TokenRange EMBEDDED_TOKENS = TokenRange.EMBEDDED;

    private static final LongUnaryOperator MINUS_ONE = n -> n - 1;
    /**
     * Tokens of SGLang's context a prompt cannot use: {@code max_req_input_len = min(context_len - 1,
     * max_total_num_tokens - 1) - 5} (python/sglang/srt/managers/tp_worker.py), and the scheduler refuses a prompt of
     * {@code len >= max_req_input_len} (validate_input_length in scheduler.py), so the largest prompt is
     * {@code min(context_len, max_total_num_tokens) - 7}. The predictor sizes SGLang with the same rule.
     */
    public static final long SGLANG_PROMPT_RESERVE = 7;

    private static final LongUnaryOperator SGLANG_PROMPT = n -> n - SGLANG_PROMPT_RESERVE;
    // llama.cpp rounds n_ctx up to a multiple of 32; with one slot, n_ctx_slot = n_ctx.
    private static final LongUnaryOperator ROUNDED_32_MINUS_ONE = n -> (n + 31) / 32 * 32 - 1;

    // ---- request refusals: the prompt is too long ----
    private static final ResponseRule VLLM_CONTEXT = reject("maximum context length (?:is |\\()" + NUM);
    private static final ResponseRule VLLM_PROMPT = reject("longer than the maximum model length of " + NUM);
    private static final ResponseRule SGLANG_ALLOWED = reject("exceeds the maximum allowed length \\(" + NUM);
    private static final ResponseRule SGLANG_CONTEXT = reject("longer than the model's context length \\(" + NUM);
    private static final ResponseRule LLAMACPP_CONTEXT =
            reject("exceed_context_size_error|exceeds the available context size", "\"?n_ctx\"?\\s*[:=]\\s*" + NUM);
    private static final ResponseRule TRTLLM_TOKENS =
            reject("should not exceed max_num_tokens", "should not exceed max_num_tokens \\(" + NUM);
    private static final ResponseRule TGI_TOTAL =
            reject("inputs`? tokens \\+ `?max_new_tokens`? must be <=", "max_new_tokens`? must be <=\\s*" + NUM);
    private static final ResponseRule TGI_INPUTS = reject("inputs`? must have less than " + NUM + " tokens");
    private static final ResponseRule EMBEDDED_CONTEXT = reject(
            "context_length_exceeded|exceeds the context of " + NUM + " tokens",
            "exceeds the context of " + NUM + " tokens");
    // Any engine, any version: the answer says the input is too long but names no number we know.
    private static final ResponseRule TOO_LONG = new ResponseRule(
            pattern("too long|too many tokens|longer than|exceeds?\\b[^.]{0,40}\\b(context|length|max_model_len"
                    + "|max_seq_len|session_len)|context (length|size|window)"),
            null);

    // ---- startup failures every engine can show ----
    private static final List<StartupRule> COMMON_STARTUP = List.of(
            rule(
                    FailureClass.OOM_STARTUP,
                    "(cuda|hip|xpu|npu) out of memory|OutOfMemoryError|capture cuda graph failed|bad_alloc"
                            + "|failed to allocate compute pp buffers|cudaMalloc failed|cudaErrorMemoryAllocation",
                    List.of(),
                    f -> "ran out of accelerator memory while loading or capturing graphs (" + quote(f)
                            + "); lower the context length or the memory fraction, or use more devices"),
            rule(
                    FailureClass.CONFIG_REJECTED,
                    ": error: argument|error: unrecognized arguments|invalid int value|invalid choice:"
                            + "|error: unexpected argument|error: invalid value|error: invalid argument",
                    List.of(),
                    f -> "the engine rejected its arguments (" + quote(f) + "); fix the command line"));

    private static final Map<String, EngineProfile> PROFILES = index(
            server("vllm", HintKind.MAX_MODEL_LEN, MINUS_ONE)
                    .capacity(CapacityField.KV_CAPACITY, "GPU KV cache size: " + NUM + " tokens")
                    .capacity(CapacityField.MAX_CONTEXT, "Auto-fit max_model_len: reduced from [\\d,]+ to " + NUM)
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "estimated maximum model length is|to serve at least one request with the model",
                            List.of(
                                    read(Role.HINT, "estimated maximum model length is " + NUM),
                                    read(Role.NEED, "max seq len \\(" + NUM)),
                            f -> "the engine refused to start: max model length " + fmt(f.need())
                                    + " does not fit in the KV cache, the estimated maximum model length is "
                                    + fmt(f.hint()) + "; lower max_model_len or raise gpu_memory_utilization"))
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "larger than the maximum number of tokens that can be stored in KV cache",
                            List.of(
                                    read(Role.KV, "stored in KV cache \\(" + NUM),
                                    read(Role.HINT, "stored in KV cache \\(" + NUM),
                                    read(Role.NEED, "max seq len \\(" + NUM)),
                            f -> "KV cache holds " + fmt(f.kv()) + " tokens, " + fmt(f.need())
                                    + " needed; lower max_model_len or raise gpu_memory_utilization"))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "no available memory for the cache blocks",
                            List.of(),
                            f -> "no accelerator memory is left for the KV cache after loading the model;"
                                    + " raise gpu_memory_utilization or use more devices"))
                    .startup(rule(
                            FailureClass.CONFIG_REJECTED,
                            "greater than the derived max_model_len",
                            List.of(read(Role.HINT, "derived max_model_len \\(\\w+=" + NUM)),
                            f -> "max_model_len is above the model's own limit of " + fmt(f.hint())
                                    + " tokens; lower it or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"))
                    .reject(VLLM_CONTEXT, VLLM_PROMPT),
            sglang("sglang"),
            sglang("sglang-kunlun"),
            // n_ctx is the context llama.cpp was asked for, not what memory holds: it is no capacity hint,
            // only a 400 from the running server names a limit worth steering by.
            server("llamacpp", HintKind.PROMPT_LEN, ROUNDED_32_MINUS_ONE)
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "failed to allocate (buffer for )?kv cache",
                            List.of(read(Role.NEED, "\\bn_ctx\\s*=\\s*" + NUM)),
                            f -> "llama.cpp could not allocate the KV cache for n_ctx " + fmt(f.need())
                                    + "; lower -c or free accelerator memory"))
                    .reject(LLAMACPP_CONTEXT),
            server("trtllm", HintKind.MAX_MODEL_LEN, MINUS_ONE)
                    .capacity(CapacityField.KV_CAPACITY, "for max tokens in paged KV cache \\(" + NUM)
                    .capacity(CapacityField.MAX_CONTEXT, "Adjusted max_seq_len to " + NUM)
                    .reject(TRTLLM_TOKENS),
            server("lmdeploy", HintKind.MAX_MODEL_LEN, MINUS_ONE)
                    .readiness(MODELS)
                    .emptyAnswerMeansTooLong(),
            server("tgi", HintKind.PROMPT_LEN, MINUS_ONE)
                    .capacity(CapacityField.KV_CAPACITY, "Setting max batch total tokens to " + NUM)
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "max_total_tokens`? must be <= `?max_batch_total_tokens",
                            List.of(
                                    read(Role.HINT, "max_batch_total_tokens`?\\W*Given: [\\d,]+ and " + NUM),
                                    read(Role.HINT, "Setting max batch total tokens to " + NUM)),
                            f -> "the KV cache holds " + fmt(f.hint())
                                    + " tokens in a batch, less than max_total_tokens;"
                                    + " lower --max-total-tokens or free accelerator memory"))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "not enough memory to handle " + NUM + " prefill tokens",
                            List.of(),
                            f -> "warm-up ran out of memory (" + quote(f) + "); lower --max-batch-prefill-tokens"))
                    .reject(TGI_TOTAL, TGI_INPUTS),
            server("embedded", HintKind.MAX_MODEL_LEN, ROUNDED_32_MINUS_ONE)
                    .tokens(EMBEDDED_TOKENS)
                    .capacity(CapacityField.KV_CAPACITY, "ctxprobe-serve: kv capacity " + NUM + " tokens")
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "kv budget exceeded",
                            List.of(
                                    read(Role.KV, "hold " + NUM + " tokens"),
                                    read(Role.HINT, "hold " + NUM + " tokens"),
                                    read(Role.NEED, NUM + " requested")),
                            f -> "the KV budget holds " + fmt(f.kv()) + " tokens, " + fmt(f.need())
                                    + " requested; lower --ctx-size or raise --kv-memory"))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "could not allocate the context",
                            List.of(),
                            f -> "llama.cpp could not allocate the context (" + quote(f)
                                    + "); lower --ctx-size or free memory"))
                    .startup(rule(
                            FailureClass.CONFIG_REJECTED,
                            "unknown option|invalid value for option|missing required",
                            List.of(),
                            f -> "ctxprobe serve rejected its arguments (" + quote(f) + "); fix the command line"))
                    .reject(EMBEDDED_CONTEXT),
            new Builder("openai", false, HintKind.MAX_MODEL_LEN, MINUS_ONE)
                    .readiness(MODELS)
                    .reject(
                            VLLM_CONTEXT,
                            VLLM_PROMPT,
                            SGLANG_ALLOWED,
                            SGLANG_CONTEXT,
                            LLAMACPP_CONTEXT,
                            TRTLLM_TOKENS,
                            TGI_TOTAL,
                            TGI_INPUTS,
                            EMBEDDED_CONTEXT));

    private EngineProfiles() {}

    /** The profile of that name. */
    public static EngineProfile get(String name) {
        EngineProfile profile = PROFILES.get(name);
        if (profile == null) {
            throw new IllegalArgumentException(
                    "unknown engine '" + name + "'; known engines: " + String.join(", ", PROFILES.keySet()));
        }
        return profile;
    }

    /** The known profile names, in definition order. */
    public static Set<String> names() {
        return Collections.unmodifiableSet(PROFILES.keySet());
    }

    private static Builder sglang(String name) {
        return server(name, HintKind.PROMPT_LEN, SGLANG_PROMPT)
                .capacity(CapacityField.KV_CAPACITY, "max_total_num_tokens\"?\\s*[=:]\\s*" + NUM)
                .capacity(CapacityField.KV_CAPACITY, "KV Cache is allocated\\. #tokens:\\s*" + NUM)
                .startup(rule(
                        FailureClass.OOM_STARTUP,
                        "not enough memory\\. please try to increase --mem-fraction-static",
                        List.of(),
                        f -> "not enough accelerator memory for the KV cache after loading the model;"
                                + " raise --mem-fraction-static or use more devices"))
                .startup(rule(
                        FailureClass.CONFIG_REJECTED,
                        "context_length\\W.{0,40}is greater than",
                        List.of(read(Role.HINT, "greater than the derived context_length \\(" + NUM)),
                        f -> "context_length is above the model's own limit of " + fmt(f.hint())
                                + " tokens; lower it or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"))
                .reject(SGLANG_ALLOWED, SGLANG_CONTEXT);
    }

    private static Builder server(String name, HintKind hintKind, LongUnaryOperator promptRule) {
        return new Builder(name, true, hintKind, promptRule);
    }

    private static StartupRule rule(
            FailureClass failureClass, String trigger, List<NumberRead> reads, Function<Found, String> detail) {
        return new StartupRule(failureClass, pattern(trigger), reads, detail);
    }

    private static NumberRead read(Role role, String regex) {
        return new NumberRead(role, pattern(regex));
    }

    /** A refusal whose text names the limit in group 1. */
    private static ResponseRule reject(String triggerWithLimit) {
        return reject(triggerWithLimit, triggerWithLimit);
    }

    private static ResponseRule reject(String trigger, String limit) {
        return new ResponseRule(pattern(trigger), pattern(limit));
    }

    private static String quote(Found found) {
        return LogText.head(found.line(), 160);
    }

    private static Map<String, EngineProfile> index(Builder... builders) {
        Map<String, EngineProfile> byName = new LinkedHashMap<>();
        for (Builder b : builders) {
            EngineProfile profile = b.build();
            if (byName.put(profile.name(), profile) != null) {
                throw new IllegalStateException("engine profile '" + profile.name() + "' is defined twice");
            }
        }
        return byName;
    }

    /** Collects one profile's data; the common rules go after the engine's own so specific texts win. */
    private static final class Builder {
        private final String name;
        private final boolean launchesServer;
        private final HintKind hintKind;
        private final LongUnaryOperator promptRule;
        private String readinessPath = HEALTH;
        private TokenRange tokenRange = DEFAULT_TOKENS;
        private boolean emptyAnswerMeansTooLong;
        private final List<CapacityRule> capacity = new ArrayList<>();
        private final List<StartupRule> startup = new ArrayList<>();
        private final List<ResponseRule> responses = new ArrayList<>();

        Builder(String name, boolean launchesServer, HintKind hintKind, LongUnaryOperator promptRule) {
            this.name = name;
            this.launchesServer = launchesServer;
            this.hintKind = hintKind;
            this.promptRule = promptRule;
        }

        Builder readiness(String path) {
            readinessPath = path;
            return this;
        }

        Builder tokens(TokenRange range) {
            tokenRange = range;
            return this;
        }

        Builder emptyAnswerMeansTooLong() {
            emptyAnswerMeansTooLong = true;
            return this;
        }

        Builder capacity(CapacityField field, String regex) {
            capacity.add(new CapacityRule(pattern(regex), field));
            return this;
        }

        Builder startup(StartupRule rule) {
            startup.add(rule);
            return this;
        }

        Builder reject(ResponseRule... rules) {
            responses.addAll(List.of(rules));
            return this;
        }

        EngineProfile build() {
            List<StartupRule> startupRules = launchesServer
                    ? Stream.concat(startup.stream(), COMMON_STARTUP.stream()).toList()
                    : List.of();
            List<ResponseRule> responseRules =
                    Stream.concat(responses.stream(), Stream.of(TOO_LONG)).toList();
            return new EngineProfile(
                    name,
                    launchesServer,
                    readinessPath,
                    hintKind,
                    promptRule,
                    tokenRange,
                    emptyAnswerMeansTooLong,
                    capacity,
                    startupRules,
                    responseRules);
        }
    }
}
