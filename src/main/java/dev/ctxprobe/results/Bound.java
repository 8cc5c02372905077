package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** What sets a predicted frontier: the first rule the next aligned target breaks. */
public enum Bound {
    /** The model's own limit from its config ({@code max_position_embeddings}, GGUF {@code context_length}). */
    MODEL_CONFIG("the model config"),
    /** The KV cache does not hold the next length in the memory there is. */
    KV_MEMORY("KV memory"),
    /** A context length fixed in the command (not templated by the target). */
    CONTEXT_FLAG("the context flag in the command"),
    /** The engine's prompt rule needs more room than {@code context_pad} leaves (vLLM: prompt + 1 output). */
    ENGINE_PAD("the engine's prompt rule (context_pad too small)"),
    /** llama.cpp without a unified KV cache gives each slot {@code n_ctx / np}. */
    ENGINE_SLOTS("the engine's per-slot context"),
    /** SGLang keeps a few tokens of the context for itself ({@code max_req_input_len}). */
    ENGINE_RESERVE("the engine's own reserve"),
    /** Something below the frontier's {@code align} fits, but no multiple of it does. */
    ALIGNMENT("the frontier's alignment"),
    /** The command needs more accelerators than the machine has. */
    DEVICES("the device count"),
    /**
     * The engine refuses the command at any length (llama.cpp: a quantized V cache without flash attention, a model
     * file that is no whole GGUF).
     */
    ENGINE_REFUSES("a command the engine refuses"),
    /** No limit is known from the inputs there are. */
    UNKNOWN("nothing known");

    private final String label;

    Bound(String label) {
        this.label = label;
    }

    /** Words for a sentence: "set by the model config". */
    public String label() {
        return label;
    }

    @JsonValue
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
