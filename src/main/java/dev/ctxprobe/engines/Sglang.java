package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.fmt;
import static dev.ctxprobe.engine.ProfileBuilder.read;
import static dev.ctxprobe.engine.ProfileBuilder.reject;
import static dev.ctxprobe.engine.ProfileBuilder.rule;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.EngineProfile.StatedField;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.engine.Progress;
import dev.ctxprobe.engine.StatedReaders;
import dev.ctxprobe.predict.SglangModel;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import java.util.function.LongUnaryOperator;

/** SGLang and its Kunlun build: their texts, and their sizing by the token pool. */
final class Sglang {
    /**
     * Tokens of SGLang's context a prompt cannot use: {@code max_req_input_len = min(context_len - 1,
     * max_total_num_tokens - 1) - 5} (python/sglang/srt/managers/tp_worker.py), and the scheduler refuses a prompt of
     * {@code len >= max_req_input_len} (validate_input_length in scheduler.py), so the largest prompt is
     * {@code min(context_len, max_total_num_tokens) - 7}. The sizing reads the same rule from the profile.
     */
    private static final long PROMPT_RESERVE = 7;

    private static final LongUnaryOperator PROMPT = n -> n - PROMPT_RESERVE;

    // The limits of a running SGLang server bound the prompt, whatever profile reads them (openai).
    static final ResponseRule ALLOWED = reject("exceeds the maximum allowed length \\(" + NUM, HintKind.PROMPT_LEN);

    static final ResponseRule CONTEXT = reject("longer than the model's context length \\(" + NUM, HintKind.PROMPT_LEN);

    static final Engine ENGINE = engine("sglang");

    static final Engine KUNLUN = engine("sglang-kunlun");

    private Sglang() {}

    private static Engine engine(String name) {
        EngineProfile profile = ProfileBuilder.server(name, HintKind.PROMPT_LEN, PROMPT)
                .capacity(CapacityField.KV_CAPACITY, StatedField.KV, "max_total_num_tokens\"?\\s*[=:]\\s*" + NUM)
                .capacity(CapacityField.KV_CAPACITY, "KV Cache is allocated\\. #tokens:\\s*" + NUM)
                // DeepSeek-V4 sizes several pools; the full-attention one holds the whole context.
                .capacity(CapacityField.KV_CAPACITY, "DSV4 pool sizes: full=" + NUM)
                .stated(
                        HintKind.PROMPT_LEN,
                        16,
                        // Without max_req_input_len stated, the context and the pool give it by the same rule.
                        PROMPT,
                        List.of(
                                new StatedEndpoint("/get_server_info", StatedReaders::sglangServerInfo),
                                new StatedEndpoint("/metrics", StatedReaders::sglangMetrics)),
                        List.of(
                                "CONTEXT:\\bcontext_len\"?\\s*[=:]\\s*" + NUM,
                                // The scheduler's cap on requests run together: the capacity map's N above it
                                // are never held at once (docs/search.md#the-capacity-map).
                                "MAX_RUNNING:\\bmax_running_requests\"?\\s*[=:]\\s*" + NUM))
                .startup(rule(
                        FailureClass.OOM_STARTUP,
                        "not enough memory\\. please try to increase --mem-fraction-static",
                        List.of(),
                        f -> "not enough " + f.memory() + " for the KV cache after loading the model;"
                                + " raise --mem-fraction-static or use more devices"))
                .startup(rule(
                        FailureClass.CONFIG_REJECTED,
                        "context_length\\W.{0,40}is greater than",
                        List.of(read("greater than the derived context_length \\(" + NUM, Role.HINT)),
                        f -> "context_length is above the model's own limit of " + fmt(f.hint())
                                + " tokens; lower it or set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
                        // The model's limit bounds --context-length, the server's max_model_len.
                        HintKind.MAX_MODEL_LEN))
                // A scheduler (one per tensor-parallel rank) that failed leaves the others waiting in a collective.
                .fatal("Scheduler hit an exception")
                .tracebacks()
                // With --enable-metrics: requests held, and the pool's usage and token counters that move.
                .progress(Progress.metrics(
                        "sglang:num_running_reqs",
                        "sglang:num_queue_reqs",
                        null,
                        List.of(
                                "sglang:token_usage",
                                "sglang:num_used_tokens",
                                "sglang:prompt_tokens_total",
                                "sglang:generation_tokens_total")))
                .reject(ALLOWED, CONTEXT)
                .tokenizer(ServerTokenizer.Api.PROMPT)
                .build();
        return new Engine(profile, SglangModel.sizing(profile), List.of());
    }
}
