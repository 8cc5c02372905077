package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.MODELS;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfile.StatedEndpoint;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.engine.StatedReaders;
import dev.ctxprobe.predict.Sizing;
import dev.ctxprobe.results.HintKind;
import java.util.List;

/**
 * Any OpenAI-compatible server, usually one already running ({@code launcher: external}): any engine's refusals may
 * come back, so it knows them all; nothing is predicted.
 */
final class OpenAi {
    private static final EngineProfile PROFILE = ProfileBuilder.server("openai", HintKind.MAX_MODEL_LEN, MINUS_ONE)
            .readiness(MODELS)
            // What GET /v1/models states (vLLM's max_model_len, llama-server's meta.n_vocab): the search starts inside
            // the stated limit and the prompt ids inside the stated vocabulary (docs/engines.md, openai). An endpoint
            // already running is asked before the first step, so that no step goes above that limit.
            .stated(
                    HintKind.MAX_MODEL_LEN,
                    0,
                    MINUS_ONE,
                    List.of(new StatedEndpoint(MODELS, StatedReaders::openaiModels)),
                    List.of())
            .statedBeforeSearch()
            .reject(
                    Vllm.CONTEXT,
                    Vllm.PROMPT,
                    Sglang.ALLOWED,
                    Sglang.CONTEXT,
                    LlamaCpp.CONTEXT,
                    Trtllm.TOKENS,
                    Tgi.TOTAL,
                    Tgi.INPUTS,
                    Embedded.CONTEXT)
            .build();

    static final Engine ENGINE = new Engine(PROFILE, Sizing.none(PROFILE), List.of());

    private OpenAi() {}
}
