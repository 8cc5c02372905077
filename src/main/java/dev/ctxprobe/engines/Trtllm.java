package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.reject;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.predict.ConfigOnlyModel;
import dev.ctxprobe.results.HintKind;
import java.util.List;

/** TensorRT-LLM's {@code trtllm-serve}: its texts; its memory is not modelled, only its context flag. */
final class Trtllm {
    static final ResponseRule TOKENS =
            reject("should not exceed max_num_tokens", "should not exceed max_num_tokens \\(" + NUM);

    private static final EngineProfile PROFILE = ProfileBuilder.server("trtllm", HintKind.MAX_MODEL_LEN, MINUS_ONE)
            .capacity(CapacityField.KV_CAPACITY, "for max tokens in paged KV cache \\(" + NUM)
            .capacity(CapacityField.MAX_CONTEXT, "Adjusted max_seq_len to " + NUM)
            .reject(TOKENS)
            .tracebacks()
            .build();

    static final Engine ENGINE =
            new Engine(PROFILE, ConfigOnlyModel.sizing(PROFILE, "--max_seq_len", "--max-seq-len"), List.of());

    private Trtllm() {}
}
