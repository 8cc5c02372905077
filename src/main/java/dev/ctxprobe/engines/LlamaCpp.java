package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.MODELS;
import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.context;
import static dev.ctxprobe.engine.ProfileBuilder.fmt;
import static dev.ctxprobe.engine.ProfileBuilder.pattern;
import static dev.ctxprobe.engine.ProfileBuilder.quote;
import static dev.ctxprobe.engine.ProfileBuilder.read;
import static dev.ctxprobe.engine.ProfileBuilder.rule;
import static dev.ctxprobe.engine.ProfileBuilder.size;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.Advice;
import dev.ctxprobe.engine.EngineProfile.NumberRead;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.engine.Progress;
import dev.ctxprobe.engine.StatedReaders;
import dev.ctxprobe.predict.LlamaCppModel;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import java.util.function.LongUnaryOperator;

/** llama.cpp's llama-server: its texts (current builds and b4748), and its sizing by the KV cache and -np. */
final class LlamaCpp {
    // llama.cpp rounds -c up (to 32 in older builds, to 256 in current ones), so n_ctx is never below -c: a prompt
    // of -c - 1 always fits one slot. The server's own n_ctx_slot, read after readiness, is the exact limit.
    private static final LongUnaryOperator PROMPT = MINUS_ONE;
    private static final long ROUNDING = 255;

    // Current builds: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it"
    // with "n_ctx": 8192 (per slot) in the JSON. b4748: "the request exceeds the available context size. try
    // increasing the context size or enable context shift", no number; streamed, as an SSE "error:" line. The
    // limits of a running llama.cpp server bound the prompt, whatever profile reads them (openai).
    static final ResponseRule CONTEXT = new ResponseRule(
            pattern("exceed_context_size_error|exceeds the available context size"),
            pattern("(?:\"?n_ctx\"?\\s*[:=]\\s*|available context size \\()" + NUM),
            HintKind.PROMPT_LEN);

    // ---- what llama.cpp states (both versions) ----
    private static final List<String> STATED_LINES = List.of(
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
            // The cap, which YaRN scaling raises above n_ctx_train (b11669: -c 20000 --rope-scaling yarn --rope-scale 2
            // on a model trained at 8,192 says "(16384) - capping").
            "CAPPED_AT:exceeds the training context of the model \\(" + NUM,
            "VOCAB:\\bn_vocab\\s*=\\s*" + NUM,
            // b4748: "main: build = 4748 (d07c6213)"; b11669 at -lv 4: "common_params_print_info: build 11669
            // (Debian)".
            "BUILD:\\bbuild(?: =|:)? (\\d{1,7}) \\(",
            // -fit at -lv 4: "common_params_fit_impl: context size reduced from 1048576 to 116480 -> ...".
            "REDUCED_FROM:context size reduced from " + NUM + " to");

    // The context llama.cpp tried (-lv 4 prints n_ctx; at default verbosity only n_ctx_seq's warning above
    // n_ctx_train names it) and the size of the allocation that failed.
    private static final List<NumberRead> SIZES = List.of(
            read("\\bn_ctx_seq \\(" + NUM + "\\)", Role.NEED),
            read("\\bn_ctx(?:_per_seq)?\\s*=\\s*" + NUM, Role.NEED),
            read("attempted to allocate " + NUM + "(?:\\.\\d+)? MB", Role.MB));

    private static final Advice ADVICE = new Advice(
            "-np splits the context: each of the %d slots holds %,d tokens (any explicit -np turns the unified KV"
                    + " cache off); pass -np 1, or --kv-unified to let every slot use the whole -c",
            "the slot context is capped at %,d tokens",
            "-fit lowered the context from %,d to %,d tokens to fit memory; pass -fit off to get the -c asked for",
            "llama.cpp shifted its context and dropped part of the prompt (context shift, on by default in older"
                    + " builds); pass --no-context-shift so that an over-long prompt is refused instead",
            pattern("input truncated"),
            pattern("failed to find free space in the KV cache, retrying with smaller batch size"),
            "-np splits the context: each of the %d slots holds %,d tokens; pass -np 1 (this build has no"
                    + " --kv-unified: the flag came with llama.cpp's split KV cache in July 2025)",
            LlamaCppModel.LAST_BUILD_WITHOUT_KV_UNIFIED);

    // n_ctx is the context llama.cpp was asked for, not what memory holds: a failure names no hint. What the
    // running server states (n_ctx_slot: per slot, capped at n_ctx_train, lowered by -fit) is read after
    // readiness, and a 400 names its n_ctx.
    private static final EngineProfile PROFILE = ProfileBuilder.server("llamacpp", HintKind.PROMPT_LEN, PROMPT)
            .neverPreempts()
            .advice(ADVICE)
            .stated(
                    HintKind.PROMPT_LEN,
                    ROUNDING,
                    MINUS_ONE,
                    List.of(
                            new StatedEndpoint("/props", StatedReaders::llamaProps),
                            new StatedEndpoint(MODELS, StatedReaders::llamaModels)),
                    STATED_LINES)
            .startup(rule(
                    FailureClass.KV_INSUFFICIENT,
                    "failed to allocate (?:buffer for )?kv cache|llama_kv_cache_init: failed to allocate",
                    SIZES,
                    f -> "llama.cpp could not allocate the KV cache" + context(f) + size(f) + " (" + quote(f)
                            + "); lower -c, quantize the cache (-ctk/-ctv q8_0) or free " + f.memory()))
            .startup(rule(
                    FailureClass.OOM_STARTUP,
                    "failed to allocate compute (?:pp )?buffers",
                    SIZES,
                    f -> "llama.cpp could not allocate its compute buffers" + context(f) + size(f) + " ("
                            + quote(f) + "), which grow with the context; lower -c (or -ub), or free "
                            + f.memory()))
            .startup(rule(
                    FailureClass.OOM_STARTUP,
                    "bad_alloc",
                    SIZES,
                    f -> "llama.cpp could not allocate "
                            + (f.need() == null ? "the context" : "a context of " + fmt(f.need()) + " tokens")
                            + " (" + quote(f) + "): far more than " + f.memory() + " holds; lower -c"))
            .startup(rule(
                    FailureClass.OOM_STARTUP,
                    "insufficient memory \\(attempted to allocate",
                    SIZES,
                    f -> "llama.cpp ran out of " + f.memory() + context(f) + size(f) + " (" + quote(f) + "); lower -c"))
            // Without flash attention the V cache is stored transposed, which a quantized type cannot be; each
            // build words the refusal differently (docs/engines.md, llama.cpp).
            .startup(rule(
                    FailureClass.CONFIG_REJECTED,
                    "quantized V cache requires flash_attn|V cache quantization requires flash_attn"
                            + "|quantized V cache was requested, but this requires Flash Attention",
                    List.of(),
                    f -> "llama.cpp refuses a quantized V cache without flash attention (" + quote(f)
                            + "); pass -fa on, or keep -ctv f16"))
            .startup(rule(
                    FailureClass.CONFIG_REJECTED,
                    "failed to open GGUF file|error loading model|failed to load model",
                    List.of(),
                    f -> "llama.cpp cannot load the model (" + quote(f) + "); check -m"))
            .reject(CONTEXT)
            // Each slot's task and the tokens it processed move with every batch of a prefill and every token.
            .progress(Progress.llamaSlots())
            .tokenizer(ServerTokenizer.Api.CONTENT)
            .build();

    // llama-server reads only a local GGUF file, named by -m.
    static final Engine ENGINE = new Engine(PROFILE, LlamaCppModel.sizing(PROFILE), List.of("-m", "--model"));

    private LlamaCpp() {}
}
