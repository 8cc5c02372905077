package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * What a capacity hint limits (docs/search.md): the server's max_model_len (vLLM's estimate, TensorRT-LLM's
 * adjusted length, SGLang's model limit on context_length: probe {@code hint - pad}) or the prompt itself
 * (SGLang's maximum allowed length, llama.cpp's n_ctx: probe {@code hint - 1}). Each rule says which its number
 * is; a profile's own kind is only the default. Written in results as {@code max_model_len} or {@code prompt_len}.
 */
public enum HintKind {
    MAX_MODEL_LEN,
    PROMPT_LEN;

    @JsonValue
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static HintKind of(String id) {
        return valueOf(id.toUpperCase(Locale.ROOT));
    }
}
