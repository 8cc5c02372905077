package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.fmt;
import static dev.ctxprobe.engine.ProfileBuilder.pattern;
import static dev.ctxprobe.engine.ProfileBuilder.quote;
import static dev.ctxprobe.engine.ProfileBuilder.read;
import static dev.ctxprobe.engine.ProfileBuilder.reject;
import static dev.ctxprobe.engine.ProfileBuilder.rule;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.predict.ConfigOnlyModel;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import java.util.regex.Pattern;

/** Hugging Face's text-generation-inference: its texts; its memory is not modelled, only --max-total-tokens. */
final class Tgi {
    static final ResponseRule TOTAL = new ResponseRule(
            pattern("inputs`? tokens \\+ `?max_new_tokens`? must be <="),
            pattern("max_new_tokens`? must be <=\\s*" + NUM),
            HintKind.PROMPT_LEN);

    static final ResponseRule INPUTS = reject("inputs`? must have less than " + NUM + " tokens", HintKind.PROMPT_LEN);

    // The batch total TGI chose: its KV capacity at startup, and the hint of a refusal to start.
    private static final Pattern BATCH_TOTAL = pattern("Setting max batch total tokens to " + NUM);

    private static final EngineProfile PROFILE = ProfileBuilder.server("tgi", HintKind.PROMPT_LEN, MINUS_ONE)
            .capacity(CapacityField.KV_CAPACITY, BATCH_TOTAL)
            .startup(rule(
                    FailureClass.KV_INSUFFICIENT,
                    "max_total_tokens`? must be <= `?max_batch_total_tokens",
                    List.of(
                            read("max_batch_total_tokens`?\\W*Given: [\\d,]+ and " + NUM, Role.HINT),
                            read(BATCH_TOTAL, Role.HINT)),
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
            .reject(TOTAL, INPUTS)
            // Its model shards are Python: a shard's uncaught exception ends in a traceback.
            .tracebacks()
            .build();

    static final Engine ENGINE = new Engine(PROFILE, ConfigOnlyModel.sizing(PROFILE, "--max-total-tokens"), List.of());

    private Tgi() {}
}
