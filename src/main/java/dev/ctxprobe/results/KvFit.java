package dev.ctxprobe.results;

/**
 * The KV memory arithmetic of one backend at one length, the numbers an engine's own refusal would print.
 *
 * @param length the context length it was evaluated at (vLLM's max_model_len, SGLang's context length,
 *     llama.cpp's n_ctx)
 * @param neededBytes what the KV cache needs at {@code length}, per device
 * @param availableBytes what the inputs leave for it, per device
 * @param bytesPerToken the part that grows with the length, per token and device
 * @param fixedBytes the part that does not (sliding windows, state rings), per device
 * @param capacity the largest length that fits: vLLM's "estimated maximum model length", SGLang's
 *     max_total_num_tokens, the embedded engine's KV capacity
 */
public record KvFit(
        long length, long neededBytes, long availableBytes, double bytesPerToken, long fixedBytes, long capacity) {}
