package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;

/**
 * What a running server states about its own limits, asked after readiness (its endpoints) and read from its
 * startup log: written on the step as {@code server.capacity}. Every number is what the engine said, never what
 * ctxprobe configured; a field is null where the engine did not say.
 *
 * @param contextTokens the context one request may fill: llama.cpp's {@code n_ctx_slot}, vLLM's {@code
 *     max_model_len}, SGLang's {@code context_len}
 * @param maxPromptTokens the longest prompt the server serves with one output token, by the engine's own rule
 *     ({@code n_ctx_slot - 1}, {@code max_model_len - 1}, {@code max_req_input_len - 1})
 * @param kvTokens tokens the KV cache holds: vLLM's {@code kv_cache_size_tokens} (for hybrid and DeepSeek-V4 models
 *     a figure that grows with max_model_len, not a pool size), SGLang's {@code max_total_num_tokens}
 * @param slots llama.cpp's parallel slots ({@code total_slots}, {@code n_slots})
 * @param kvUnified llama.cpp: true when every slot may use the whole context, false when {@code -np} split it
 * @param trainContextTokens the model's training context (llama.cpp's {@code n_ctx_train})
 * @param vocabSize the model's vocabulary ({@code n_vocab}): prompts use ids inside it
 * @param reducedFrom the context the engine lowered to fit memory from (llama.cpp's {@code -fit}, vLLM's auto-fit)
 * @param cappedAt llama.cpp: the context a slot was capped at ("exceeds the training context of the model (N) -
 *     capping"): the training context, times the rope scale under YaRN
 * @param build llama.cpp: the build the server runs ({@code /props} {@code build_info}, or its log's {@code build}
 *     line), so that advice names only flags that build has
 * @param maxConcurrency vLLM's own statement of how many requests of its {@code max_model_len} its KV cache holds
 *     at once ({@code Maximum concurrency for 32,768 tokens per request: 2.41x}, {@code kv_cache_max_concurrency});
 *     absent where the engine did not say
 * @param maxRunningRequests SGLang's cap on the requests it runs together ({@code max_running_requests}); absent
 *     where the engine did not say
 * @param sources where the numbers came from, e.g. {@code GET /props}, {@code log}
 */
public record ServedCapacity(
        Long contextTokens,
        Long maxPromptTokens,
        Long kvTokens,
        Integer slots,
        Boolean kvUnified,
        Long trainContextTokens,
        Integer vocabSize,
        Long reducedFrom,
        Long cappedAt,
        Long build,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double maxConcurrency,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integer maxRunningRequests,
        List<String> sources) {

    /** A step whose server stated nothing. */
    public static final ServedCapacity NONE =
            new ServedCapacity(null, null, null, null, null, null, null, null, null, null, null);

    /** What a server states without a statement of the requests it holds at once. */
    public ServedCapacity(
            Long contextTokens,
            Long maxPromptTokens,
            Long kvTokens,
            Integer slots,
            Boolean kvUnified,
            Long trainContextTokens,
            Integer vocabSize,
            Long reducedFrom,
            Long cappedAt,
            Long build,
            List<String> sources) {
        this(
                contextTokens,
                maxPromptTokens,
                kvTokens,
                slots,
                kvUnified,
                trainContextTokens,
                vocabSize,
                reducedFrom,
                cappedAt,
                build,
                null,
                null,
                sources);
    }

    /** How close below a stated capacity a hung request counts as the hang at capacity. */
    public static final double NEAR = 0.02;

    public ServedCapacity {
        sources = sources == null ? List.of() : List.copyOf(sources);
    }

    /** True when the engine stated nothing at all. */
    @JsonIgnore
    public boolean isEmpty() {
        return contextTokens == null
                && maxPromptTokens == null
                && kvTokens == null
                && slots == null
                && kvUnified == null
                && trainContextTokens == null
                && vocabSize == null
                && reducedFrom == null
                && cappedAt == null
                && build == null
                && maxConcurrency == null
                && maxRunningRequests == null;
    }

    /** This capacity with {@code other}'s numbers where this one has none; sources of both, in order. */
    public ServedCapacity or(ServedCapacity other) {
        List<String> both = new ArrayList<>(sources);
        other.sources.stream().filter(s -> !both.contains(s)).forEach(both::add);
        return new ServedCapacity(
                first(contextTokens, other.contextTokens),
                first(maxPromptTokens, other.maxPromptTokens),
                first(kvTokens, other.kvTokens),
                first(slots, other.slots),
                first(kvUnified, other.kvUnified),
                first(trainContextTokens, other.trainContextTokens),
                first(vocabSize, other.vocabSize),
                first(reducedFrom, other.reducedFrom),
                first(cappedAt, other.cappedAt),
                first(build, other.build),
                first(maxConcurrency, other.maxConcurrency),
                first(maxRunningRequests, other.maxRunningRequests),
                both);
    }

    /** This capacity with the longest prompt set, where the engine's rule gives it from the context. */
    public ServedCapacity withMaxPrompt(Long tokens) {
        return new ServedCapacity(
                contextTokens,
                tokens,
                kvTokens,
                slots,
                kvUnified,
                trainContextTokens,
                vocabSize,
                reducedFrom,
                cappedAt,
                build,
                maxConcurrency,
                maxRunningRequests,
                sources);
    }

    /** The same numbers from one source. */
    public ServedCapacity from(String source) {
        if (isEmpty()) {
            return NONE;
        }
        return new ServedCapacity(
                contextTokens,
                maxPromptTokens,
                kvTokens,
                slots,
                kvUnified,
                trainContextTokens,
                vocabSize,
                reducedFrom,
                cappedAt,
                build,
                maxConcurrency,
                maxRunningRequests,
                List.of(source));
    }

    /**
     * True when a prompt of {@code target} tokens lies at the KV capacity the server stated: at most {@value #NEAR}
     * of it below, or at it. A request that hangs there is the hang at capacity that vLLM shows (admitted, never
     * scheduled, when it needs every block), not a sign that every longer prompt fails. The context limit is no
     * such capacity: it is what the server was configured for, and a prompt above it is refused, not held.
     */
    public boolean near(long target) {
        return kvTokens != null && target <= kvTokens && kvTokens - target <= NEAR * kvTokens;
    }

    private static <T> T first(T a, T b) {
        return a != null ? a : b;
    }
}
