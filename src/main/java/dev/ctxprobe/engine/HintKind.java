package dev.ctxprobe.engine;

/**
 * What a capacity hint limits (spec 05): the server's max_model_len (vLLM's estimate, TensorRT-LLM's
 * adjusted length: probe {@code hint - pad}) or the prompt itself (SGLang's maximum allowed length,
 * llama.cpp's n_ctx: probe {@code hint - 1}).
 */
public enum HintKind {
    MAX_MODEL_LEN,
    PROMPT_LEN
}
