package dev.ctxprobe.client;

/**
 * One request ready to send: its JSON body is already serialized, so building it is not latency.
 *
 * @param index position within its group (warm-ups and measured requests count separately)
 * @param warmup true for unmeasured warm-up requests
 * @param targetLen the number of token ids in the prompt
 * @param body the complete JSON body, built by {@link TokenPrompts#body}
 */
public record CompletionRequest(int index, boolean warmup, long targetLen, byte[] body) {}
