package dev.ctxprobe.engine;

import static dev.ctxprobe.engine.LogText.NUM;
import static dev.ctxprobe.engine.LogText.fmt;
import static dev.ctxprobe.engine.LogText.pattern;

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
    // The embedded engine's llama.cpp rounds n_ctx up to a multiple of 32; with one slot, n_ctx_slot = n_ctx.
    private static final LongUnaryOperator ROUNDED_32_MINUS_ONE = n -> (n + 31) / 32 * 32 - 1;
    // llama.cpp rounds -c up (to 32 in older builds, to 256 in current ones), so n_ctx is never below -c: a prompt
    // of -c - 1 always fits one slot. The server's own n_ctx_slot, read after readiness, is the exact limit.
    private static final LongUnaryOperator LLAMACPP_PROMPT = MINUS_ONE;
    private static final long LLAMACPP_ROUNDING = 255;

    // ---- request refusals: the prompt is too long ----
    private static final ResponseRule VLLM_CONTEXT = reject("maximum context length (?:is |\\()" + NUM);
    private static final ResponseRule VLLM_PROMPT = reject("longer than the maximum model length of " + NUM);
    // The limits of a running SGLang or llama.cpp server bound the prompt, whatever profile reads them (openai).
    private static final ResponseRule SGLANG_ALLOWED =
            reject("exceeds the maximum allowed length \\(" + NUM, HintKind.PROMPT_LEN);
    private static final ResponseRule SGLANG_CONTEXT =
            reject("longer than the model's context length \\(" + NUM, HintKind.PROMPT_LEN);
    // Current builds: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it"
    // with "n_ctx": 8192 (per slot) in the JSON. b4748: "the request exceeds the available context size. try
    // increasing the context size or enable context shift", no number; streamed, as an SSE "error:" line.
    private static final ResponseRule LLAMACPP_CONTEXT = new ResponseRule(
            pattern("exceed_context_size_error|exceeds the available context size"),
            pattern("(?:\"?n_ctx\"?\\s*[:=]\\s*|available context size \\()" + NUM),
            HintKind.PROMPT_LEN);
    private static final ResponseRule TRTLLM_TOKENS =
            reject("should not exceed max_num_tokens", "should not exceed max_num_tokens \\(" + NUM);
    private static final ResponseRule TGI_TOTAL = new ResponseRule(
            pattern("inputs`? tokens \\+ `?max_new_tokens`? must be <="),
            pattern("max_new_tokens`? must be <=\\s*" + NUM),
            HintKind.PROMPT_LEN);
    private static final ResponseRule TGI_INPUTS =
            reject("inputs`? must have less than " + NUM + " tokens", HintKind.PROMPT_LEN);
    private static final ResponseRule EMBEDDED_CONTEXT = reject("maximum context length is " + NUM + " tokens");
    // Any engine, any version: the answer says the input is too long but names no number we know.
    private static final ResponseRule TOO_LONG = new ResponseRule(
            pattern("too long|too many tokens|longer than|exceeds?\\b[^.]{0,40}\\b(context|length|max_model_len"
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

    // ---- what llama.cpp states (both versions) ----
    private static final List<String> LLAMACPP_STATED_LINES = List.of(
            // b11669: "load_model: initializing, n_slots = 1, n_ctx_slot = 8192, kv_unified = 'false'";
            // b4748: "new slot n_ctx_slot = 4096"; -lv 4: "new slot, n_ctx = 8192"; b4748: "n_ctx_per_seq = 4096".
            "CONTEXT:\\bn_ctx_per_seq\\s*=\\s*" + NUM,
            "CONTEXT:new slot,? n_ctx(?:_slot)?\\s*=\\s*" + NUM,
            "CONTEXT:\\bn_ctx_slot\\s*=\\s*" + NUM,
            "SLOTS:\\bn_slots\\s*=\\s*" + NUM,
            "SLOTS:using n_parallel = " + NUM,
            "KV_UNIFIED:kv_unified\\s*=\\s*'?(true|false)",
            "TRAIN_CONTEXT:\\bn_ctx_train\\s*=\\s*" + NUM,
            "TRAIN_CONTEXT:\\bn_ctx_train \\(" + NUM + "\\)",
            "TRAIN_CONTEXT:exceeds the training context of the model \\(" + NUM,
            "VOCAB:\\bn_vocab\\s*=\\s*" + NUM,
            // -fit at -lv 4: "common_params_fit_impl: context size reduced from 1048576 to 116480 -> ...".
            "REDUCED_FROM:context size reduced from " + NUM + " to");

    // The context llama.cpp tried (-lv 4 prints n_ctx; at default verbosity only n_ctx_seq's warning above
    // n_ctx_train names it) and the size of the allocation that failed.
    private static final List<NumberRead> LLAMACPP_SIZES = List.of(
            read(Role.NEED, "\\bn_ctx_seq \\(" + NUM + "\\)"),
            read(Role.NEED, "\\bn_ctx(?:_per_seq)?\\s*=\\s*" + NUM),
            read(Role.MB, "attempted to allocate " + NUM + "(?:\\.\\d+)? MB"));

    private static final Advice LLAMACPP_ADVICE = new Advice(
            "-np splits the context: each of the %d slots holds %,d tokens (any explicit -np turns the unified KV"
                    + " cache off); pass -np 1, or --kv-unified to let every slot use the whole -c",
            "the slot context is capped at the model's training context of %,d tokens (n_ctx_train)",
            "-fit lowered the context from %,d to %,d tokens to fit memory; pass -fit off to get the -c asked for",
            "llama.cpp shifted its context and dropped part of the prompt (context shift, on by default in older"
                    + " builds); pass --no-context-shift so that an over-long prompt is refused instead",
            pattern("input truncated"));

    private static final Advice VLLM_ADVICE =
            new Advice(null, null, "auto-fit lowered max_model_len from %,d to %,d tokens to fit memory", null, null);

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

    private static final Map<String, EngineProfile> PROFILES = index(
            server("vllm", HintKind.MAX_MODEL_LEN, MINUS_ONE)
                    // Not a pool size for hybrid, sliding-window and DeepSeek-V4 models (max_concurrency *
                    // max_model_len): recorded, never steered by.
                    .kvCapacityDoesNotSteer()
                    .autoLength("auto")
                    .advice(VLLM_ADVICE)
                    // Newer builds may print both figures on one line: nothing is anchored at the line's end.
                    .capacity(CapacityField.KV_CAPACITY, "GPU KV cache size: " + NUM + " tokens")
                    .capacity(CapacityField.MAX_CONTEXT, "Auto-fit max_model_len: reduced from [\\d,]+ to " + NUM)
                    .capacity(
                            CapacityField.MAX_CONTEXT,
                            "Auto-fit max_model_len: full model context length " + NUM + " fits")
                    .stated(
                            HintKind.MAX_MODEL_LEN,
                            0,
                            MINUS_ONE,
                            List.of(
                                    new StatedEndpoint(MODELS, StatedReaders::vllmModels),
                                    new StatedEndpoint("/metrics", StatedReaders::vllmMetrics)),
                            List.of(
                                    "KV:GPU KV cache size: " + NUM + " tokens",
                                    "CONTEXT:Auto-fit max_model_len: reduced from [\\d,]+ to " + NUM,
                                    "REDUCED_FROM:Auto-fit max_model_len: reduced from " + NUM,
                                    "CONTEXT:Auto-fit max_model_len: full model context length " + NUM + " fits"))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "cannot auto-fit max_model_len: not enough",
                            List.of(),
                            f -> "vLLM could not fit even a single token in " + f.memory()
                                    + " (--max-model-len auto); raise gpu_memory_utilization or use more devices"))
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
                            f -> "no " + f.memory() + " is left for the KV cache after loading the model;"
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
            // n_ctx is the context llama.cpp was asked for, not what memory holds: a failure names no hint. What the
            // running server states (n_ctx_slot: per slot, capped at n_ctx_train, lowered by -fit) is read after
            // readiness, and a 400 names its n_ctx.
            server("llamacpp", HintKind.PROMPT_LEN, LLAMACPP_PROMPT)
                    .advice(LLAMACPP_ADVICE)
                    .stated(
                            HintKind.PROMPT_LEN,
                            LLAMACPP_ROUNDING,
                            MINUS_ONE,
                            List.of(
                                    new StatedEndpoint("/props", StatedReaders::llamaProps),
                                    new StatedEndpoint(MODELS, StatedReaders::llamaModels)),
                            LLAMACPP_STATED_LINES)
                    .startup(rule(
                            FailureClass.KV_INSUFFICIENT,
                            "failed to allocate (?:buffer for )?kv cache|llama_kv_cache_init: failed to allocate",
                            LLAMACPP_SIZES,
                            f -> "llama.cpp could not allocate the KV cache" + context(f) + size(f) + " ("
                                    + quote(f) + "); lower -c, quantize the cache (-ctk/-ctv q8_0) or free "
                                    + f.memory()))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "failed to allocate compute (?:pp )?buffers",
                            LLAMACPP_SIZES,
                            f -> "llama.cpp could not allocate its compute buffers" + context(f) + size(f) + " ("
                                    + quote(f) + "), which grow with the context; lower -c (or -ub), or free "
                                    + f.memory()))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "bad_alloc",
                            LLAMACPP_SIZES,
                            f -> "llama.cpp could not allocate "
                                    + (f.need() == null ? "the context" : "a context of " + fmt(f.need()) + " tokens")
                                    + " (" + quote(f) + "): far more than " + f.memory() + " holds; lower -c"))
                    .startup(rule(
                            FailureClass.OOM_STARTUP,
                            "insufficient memory \\(attempted to allocate",
                            LLAMACPP_SIZES,
                            f -> "llama.cpp ran out of " + f.memory() + context(f) + size(f) + " (" + quote(f)
                                    + "); lower -c"))
                    .startup(rule(
                            FailureClass.CONFIG_REJECTED,
                            "failed to open GGUF file|error loading model|failed to load model",
                            List.of(),
                            f -> "llama.cpp cannot load the model (" + quote(f) + "); check -m"))
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
                                    + " lower --max-total-tokens or free " + f.memory(),
                            // The batch total bounds max_total_tokens, the server's max_model_len, not the prompt.
                            HintKind.MAX_MODEL_LEN))
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
                            FailureClass.PORT_BUSY,
                            "ctxprobe serve: port \\d+ on \\S+ is already in use",
                            List.of(),
                            f -> "the port was taken between the check and the launch (" + quote(f)
                                    + "); leave the port out to let ctxprobe pick one"))
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
                // DeepSeek-V4 sizes several pools; the full-attention one holds the whole context.
                .capacity(CapacityField.KV_CAPACITY, "DSV4 pool sizes: full=" + NUM)
                .stated(
                        HintKind.PROMPT_LEN,
                        16,
                        // Without max_req_input_len stated, the context and the pool give it by the same rule.
                        SGLANG_PROMPT,
                        List.of(
                                new StatedEndpoint("/get_server_info", StatedReaders::sglangServerInfo),
                                new StatedEndpoint("/metrics", StatedReaders::sglangMetrics)),
                        List.of(
                                "KV:max_total_num_tokens\"?\\s*[=:]\\s*" + NUM,
                                "CONTEXT:\\bcontext_len\"?\\s*[=:]\\s*" + NUM))
                .startup(rule(
                        FailureClass.OOM_STARTUP,
                        "not enough memory\\. please try to increase --mem-fraction-static",
                        List.of(),
                        f -> "not enough " + f.memory() + " for the KV cache after loading the model;"
                                + " raise --mem-fraction-static or use more devices"))
                .startup(rule(
                        FailureClass.CONFIG_REJECTED,
                        "context_length\\W.{0,40}is greater than",
                        List.of(read(Role.HINT, "greater than the derived context_length \\(" + NUM)),
                        f -> "context_length is above the model's own limit of " + fmt(f.hint())
                                + " tokens; lower it or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                        // The model's limit bounds --context-length, the server's max_model_len.
                        HintKind.MAX_MODEL_LEN))
                .reject(SGLANG_ALLOWED, SGLANG_CONTEXT);
    }

    private static Builder server(String name, HintKind hintKind, LongUnaryOperator promptRule) {
        return new Builder(name, true, hintKind, promptRule);
    }

    private static StartupRule rule(
            FailureClass failureClass, String trigger, List<NumberRead> reads, Function<Found, String> detail) {
        return rule(failureClass, trigger, reads, detail, null);
    }

    private static StartupRule rule(
            FailureClass failureClass,
            String trigger,
            List<NumberRead> reads,
            Function<Found, String> detail,
            HintKind hintKind) {
        return new StartupRule(failureClass, pattern(trigger), reads, detail, hintKind);
    }

    private static String context(Found f) {
        return f.need() == null ? "" : " for a context of " + fmt(f.need()) + " tokens";
    }

    private static String size(Found f) {
        return f.mb() == null ? "" : " (" + fmt(f.mb()) + " MB)";
    }

    private static NumberRead read(Role role, String regex) {
        return new NumberRead(role, pattern(regex));
    }

    /** A refusal whose text names the limit in group 1. */
    private static ResponseRule reject(String triggerWithLimit) {
        return reject(triggerWithLimit, triggerWithLimit);
    }

    private static ResponseRule reject(String trigger, String limit) {
        return new ResponseRule(pattern(trigger), pattern(limit), null);
    }

    /** A refusal whose text names, in group 1, a limit on what {@code kind} says. */
    private static ResponseRule reject(String triggerWithLimit, HintKind kind) {
        return new ResponseRule(pattern(triggerWithLimit), pattern(triggerWithLimit), kind);
    }

    private static String quote(Found found) {
        return LogText.head(LogText.withoutStamp(found.line()), 160);
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
        private boolean kvCapacitySteers = true;
        private String autoLength;
        private Advice advice = Advice.NONE;
        private Stated stated = Stated.NOTHING;
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

        Builder kvCapacityDoesNotSteer() {
            kvCapacitySteers = false;
            return this;
        }

        Builder autoLength(String value) {
            autoLength = value;
            return this;
        }

        Builder advice(Advice words) {
            advice = words;
            return this;
        }

        /** What the running server states; each line rule is {@code FIELD:regex}, group 1 the value. */
        Builder stated(
                HintKind kind,
                long slack,
                LongUnaryOperator promptFromContext,
                List<StatedEndpoint> endpoints,
                List<String> lines) {
            List<StatedLine> rules = new ArrayList<>();
            for (String line : lines) {
                int colon = line.indexOf(':');
                rules.add(new StatedLine(
                        pattern(line.substring(colon + 1)), StatedField.valueOf(line.substring(0, colon))));
            }
            stated = new Stated(endpoints, rules, promptFromContext, kind, slack);
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
                    launchesServer ? READY_LINES : List.of(),
                    hintKind,
                    promptRule,
                    tokenRange,
                    emptyAnswerMeansTooLong,
                    kvCapacitySteers,
                    capacity,
                    startupRules,
                    responseRules,
                    stated,
                    advice,
                    autoLength);
        }
    }
}
