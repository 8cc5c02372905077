package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.fmt;
import static dev.ctxprobe.engine.ProfileBuilder.quote;
import static dev.ctxprobe.engine.ProfileBuilder.read;
import static dev.ctxprobe.engine.ProfileBuilder.reject;
import static dev.ctxprobe.engine.ProfileBuilder.rule;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.Advice;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.engine.StatedReaders;
import dev.ctxprobe.predict.EmbeddedModel;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import java.util.function.LongUnaryOperator;

/** {@code ctxprobe serve}, the embedded engine: its texts and its sizing by the KV budget. */
final class Embedded {
    // The embedded engine's llama.cpp rounds n_ctx up to a multiple of 32; with one slot, n_ctx_slot = n_ctx.
    private static final LongUnaryOperator PROMPT = n -> (n + 31) / 32 * 32 - 1;
    private static final long ROUNDING = 31;

    static final ResponseRule CONTEXT = reject("maximum context length is " + NUM + " tokens");

    // ctxprobe serve states its slots as llama-server does: its startup line in llama-server's words ("initializing,
    // n_slots = 4, n_ctx_slot = 1024, kv_unified = 'false'") and GET /props. Its vocabulary is not read as stated:
    // prompts keep to the byte tokens (TokenRange.EMBEDDED), which a range derived from n_vocab would leave.
    private static final List<String> STATED_LINES = List.of(
            "SLOTS:ctxprobe-serve: initializing, n_slots = " + NUM,
            "CONTEXT:ctxprobe-serve: initializing, n_slots = \\d+, n_ctx_slot = " + NUM,
            "KV_UNIFIED:ctxprobe-serve: initializing, .*kv_unified = '(true|false)'");

    // The binding's llama.cpp has no unified KV cache: --parallel always splits the context.
    private static final Advice ADVICE = new Advice(
            "--parallel splits the context: each of the %d slots holds %,d tokens (this engine's llama.cpp has no"
                    + " unified KV cache); pass --parallel 1 for the longest single prompt",
            null, null, null, null, null, null, 0);

    private static final EngineProfile PROFILE = ProfileBuilder.server("embedded", HintKind.MAX_MODEL_LEN, PROMPT)
            .neverPreempts()
            .advice(ADVICE)
            .stated(
                    HintKind.MAX_MODEL_LEN,
                    ROUNDING,
                    n -> n - 1,
                    List.of(new StatedEndpoint("/props", StatedReaders::llamaProps)),
                    STATED_LINES)
            .tokens(TokenRange.EMBEDDED)
            .capacity(CapacityField.KV_CAPACITY, "ctxprobe-serve: kv capacity " + NUM + " tokens")
            .startup(rule(
                    FailureClass.KV_INSUFFICIENT,
                    "kv budget exceeded",
                    List.of(read("hold " + NUM + " tokens", Role.KV, Role.HINT), read(NUM + " requested", Role.NEED)),
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
            .reject(CONTEXT)
            .tokenizer(ServerTokenizer.Api.CONTENT)
            .build();

    // ctxprobe serve reads only a local GGUF file, named by --model.
    static final Engine ENGINE = new Engine(PROFILE, EmbeddedModel.sizing(PROFILE), List.of("--model"));

    private Embedded() {}
}
