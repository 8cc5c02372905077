package dev.ctxprobe.client;

import java.util.List;

/**
 * The raw facts of one request: status, outcome, what the server reported, and when each event
 * arrived. Times are absolute {@link System#nanoTime()} values; a null time means the event never
 * happened. Latencies follow docs/results.md (Metrics).
 *
 * @param index position within its group (warm-ups and measured requests count separately)
 * @param warmup true for unmeasured warm-up requests
 * @param targetLen the number of token ids sent
 * @param httpStatus the response status, 0 when none arrived
 * @param outcome what happened
 * @param promptTokens the server's {@code usage.prompt_tokens}, null when not reported
 * @param completionTokens the server's {@code usage.completion_tokens}, null when not reported
 * @param finishReason the last non-null {@code finish_reason}, or null
 * @param choiceEvents how many events carried a non-empty {@code choices} array
 * @param sawDone whether the stream ended with {@code data: [DONE]}
 * @param tStartNanos when the call began (before any connection was made)
 * @param tSendNanos just before the first request byte was written
 * @param tFirstNanos arrival of the first choice-bearing event
 * @param tLastNanos arrival of the last choice-bearing event
 * @param tEndNanos when the response was finished with, whatever the outcome
 * @param sendMs time to write the request (headers and body); large for huge prompts
 * @param ttftMs {@code tFirst - tSend} in ms
 * @param e2eMs {@code tLast - tSend} in ms
 * @param tpotMs {@code (e2e - ttft) / (completionTokens - 1)}, only for more than one output token
 * @param itlMs gaps between consecutive choice-bearing events in ms
 * @param errorText the head of a non-200 body, the error event's JSON, or the exception's message
 * @param bytesReceived response body bytes read
 * @param cachedTokens prompt tokens the server reported taking from its cache (vLLM's and SGLang's
 *     {@code usage.prompt_tokens_details.cached_tokens}, SGLang's {@code meta_info.cached_tokens}, llama.cpp's
 *     {@code timings.cache_n}); null when not reported
 * @param textHead the start of the output text, at most 64 characters: where a pass key is read
 * @param promptTokensWritten {@code usage.prompt_tokens} as the server wrote it when it was no whole number (text
 *     such as {@code "1024"}, {@code 1e400}); null when it was one or was not reported
 */
public record RequestRecord(
        int index,
        boolean warmup,
        long targetLen,
        int httpStatus,
        RequestOutcome outcome,
        Integer promptTokens,
        Integer completionTokens,
        String finishReason,
        int choiceEvents,
        boolean sawDone,
        long tStartNanos,
        Long tSendNanos,
        Long tFirstNanos,
        Long tLastNanos,
        long tEndNanos,
        Double sendMs,
        Double ttftMs,
        Double e2eMs,
        Double tpotMs,
        List<Double> itlMs,
        String errorText,
        long bytesReceived,
        Integer cachedTokens,
        String textHead,
        String promptTokensWritten) {

    public RequestRecord {
        itlMs = List.copyOf(itlMs);
    }

    /** A request whose {@code usage.prompt_tokens}, if any, was a whole number. */
    public RequestRecord(
            int index,
            boolean warmup,
            long targetLen,
            int httpStatus,
            RequestOutcome outcome,
            Integer promptTokens,
            Integer completionTokens,
            String finishReason,
            int choiceEvents,
            boolean sawDone,
            long tStartNanos,
            Long tSendNanos,
            Long tFirstNanos,
            Long tLastNanos,
            long tEndNanos,
            Double sendMs,
            Double ttftMs,
            Double e2eMs,
            Double tpotMs,
            List<Double> itlMs,
            String errorText,
            long bytesReceived,
            Integer cachedTokens,
            String textHead) {
        this(
                index,
                warmup,
                targetLen,
                httpStatus,
                outcome,
                promptTokens,
                completionTokens,
                finishReason,
                choiceEvents,
                sawDone,
                tStartNanos,
                tSendNanos,
                tFirstNanos,
                tLastNanos,
                tEndNanos,
                sendMs,
                ttftMs,
                e2eMs,
                tpotMs,
                itlMs,
                errorText,
                bytesReceived,
                cachedTokens,
                textHead,
                null);
    }

    /** HTTP 200, at least one choice-bearing event, and no error event. */
    public boolean ok() {
        return outcome == RequestOutcome.OK;
    }

    /** Whether the server reported exactly as many prompt tokens as were sent. */
    public boolean exactLength() {
        return promptTokens != null && promptTokens == targetLen;
    }

    /** When the measured span of this request begins: the first byte sent, or the call's start if none was. */
    public long tBeginNanos() {
        return tSendNanos != null ? tSendNanos : tStartNanos;
    }
}
