package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.MODELS;
import static dev.ctxprobe.engine.ProfileBuilder.NUM;
import static dev.ctxprobe.engine.ProfileBuilder.fmt;
import static dev.ctxprobe.engine.ProfileBuilder.read;
import static dev.ctxprobe.engine.ProfileBuilder.reject;
import static dev.ctxprobe.engine.ProfileBuilder.rule;

import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.Advice;
import dev.ctxprobe.engine.EngineProfile.CapacityField;
import dev.ctxprobe.engine.EngineProfile.NumberRead;
import dev.ctxprobe.engine.EngineProfile.ResponseRule;
import dev.ctxprobe.engine.EngineProfile.Role;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.EngineProfile.StatedField;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.engine.Progress;
import dev.ctxprobe.engine.StatedReaders;
import dev.ctxprobe.predict.VllmModel;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;

/** vLLM: its texts, its sizing by KV memory, and its self-sizing {@code --max-model-len auto}. */
final class Vllm {
    /** A refusal of a prompt over max_model_len, which an already-running vLLM gives too. */
    static final ResponseRule CONTEXT = reject("maximum context length (?:is |\\()" + NUM);

    static final ResponseRule PROMPT = reject("longer than the maximum model length of " + NUM);

    // The max_model_len asked for, which both KV refusals name.
    private static final NumberRead MAX_SEQ_LEN = read("max seq len \\(" + NUM, Role.NEED);

    private static final Advice ADVICE = new Advice(
            null,
            null,
            "auto-fit lowered max_model_len from %,d to %,d tokens to fit memory",
            null,
            null,
            null,
            null,
            0);

    private static final EngineProfile PROFILE = ProfileBuilder.server("vllm", HintKind.MAX_MODEL_LEN, MINUS_ONE)
            // Not a pool size for hybrid, sliding-window and DeepSeek-V4 models (max_concurrency *
            // max_model_len): recorded, never steered by.
            .kvCapacityDoesNotSteer()
            .autoLength("auto")
            .advice(ADVICE)
            // Newer builds may print both figures on one line: nothing is anchored at the line's end. What the
            // startup log names is also what the running server states.
            .capacity(CapacityField.KV_CAPACITY, StatedField.KV, "GPU KV cache size: " + NUM + " tokens")
            .capacity(
                    CapacityField.MAX_CONTEXT,
                    StatedField.CONTEXT,
                    "Auto-fit max_model_len: reduced from [\\d,]+ to " + NUM)
            .capacity(
                    CapacityField.MAX_CONTEXT,
                    StatedField.CONTEXT,
                    "Auto-fit max_model_len: full model context length " + NUM + " fits")
            .stated(
                    HintKind.MAX_MODEL_LEN,
                    0,
                    MINUS_ONE,
                    List.of(
                            new StatedEndpoint(MODELS, StatedReaders::vllmModels),
                            new StatedEndpoint("/metrics", StatedReaders::vllmMetrics)),
                    List.of(
                            "REDUCED_FROM:Auto-fit max_model_len: reduced from " + NUM,
                            // How many requests of max_model_len its KV cache holds at once: recorded beside the
                            // capacity map (docs/results.md#server).
                            "MAX_CONCURRENCY:Maximum concurrency for [\\d,]+ tokens per request: ([\\d.]+)x"))
            .startup(rule(
                    FailureClass.OOM_STARTUP,
                    "cannot auto-fit max_model_len: not enough",
                    List.of(),
                    f -> "vLLM could not fit even a single token in " + f.memory()
                            + " (--max-model-len auto); raise gpu_memory_utilization or use more devices"))
            .startup(rule(
                    FailureClass.KV_INSUFFICIENT,
                    "estimated maximum model length is|to serve at least one request with the model",
                    List.of(read("estimated maximum model length is " + NUM, Role.HINT), MAX_SEQ_LEN),
                    f -> "the engine refused to start: max model length " + fmt(f.need())
                            + " does not fit in the KV cache, the estimated maximum model length is "
                            + fmt(f.hint()) + "; lower max_model_len or raise gpu_memory_utilization"))
            .startup(rule(
                    FailureClass.KV_INSUFFICIENT,
                    "larger than the maximum number of tokens that can be stored in KV cache",
                    List.of(read("stored in KV cache \\(" + NUM, Role.KV, Role.HINT), MAX_SEQ_LEN),
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
                    List.of(read("derived max_model_len \\(\\w+=" + NUM, Role.HINT)),
                    f -> "max_model_len is above the model's own limit of " + fmt(f.hint())
                            + " tokens; lower it or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"))
            // vLLM's own words when its engine core or a worker failed while starting (vllm/v1/engine/core.py,
            // vllm/v1/executor/multiproc_executor.py); the root cause, if a rule names one, is elsewhere in the log.
            .fatal("Engine core initialization failed|EngineCore failed to start|WorkerProc failed to start")
            .tracebacks()
            // Requests held, and what moves while it works on them: KV usage (each prefill chunk), token counters.
            .progress(Progress.metrics(
                    "vllm:num_requests_running",
                    "vllm:num_requests_waiting",
                    "vllm:num_preemptions_total",
                    List.of(
                            "vllm:kv_cache_usage_perc",
                            "vllm:gpu_cache_usage_perc",
                            "vllm:prompt_tokens_total",
                            "vllm:generation_tokens_total",
                            "vllm:num_preemptions_total")))
            .reject(CONTEXT, PROMPT)
            .tokenizer(ServerTokenizer.Api.PROMPT)
            .build();

    static final Engine ENGINE = new Engine(PROFILE, VllmModel.sizing(PROFILE), List.of());

    private Vllm() {}
}
