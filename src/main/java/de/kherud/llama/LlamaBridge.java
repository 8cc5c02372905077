package de.kherud.llama;

import java.util.Arrays;

/**
 * Reaches two package-private parts of java-llama.cpp 4.2.0 that ctxprobe needs; a class in the library's package is
 * checked by the compiler, where reflection would fail only at run time. (1) Prompts of token ids: the public API
 * takes strings only, but the llama.cpp server underneath accepts a JSON array of ids, and ctxprobe must send prompts
 * of an exact token count (a string would be re-tokenized and get a BOS). (2) {@link LlamaException} is not public,
 * yet a load failure must be told apart from other runtime errors.
 */
public final class LlamaBridge {
    private LlamaBridge() {}

    /** Replaces the prompt of {@code params} with these ids, sent as-is (no BOS is added to a pure id prompt). */
    public static InferenceParameters setPromptIds(InferenceParameters params, int[] ids) {
        params.parameters.put("prompt", Arrays.toString(ids));
        return params;
    }

    /** Whether {@code e} was thrown by the native library. */
    public static boolean isLlamaException(Throwable e) {
        return e instanceof LlamaException;
    }
}
