package dev.ctxprobe.engine;

import dev.ctxprobe.results.HintKind;

/**
 * What an engine named about its capacity, in its startup log or a failure (docs/search.md, "Capacity hints").
 *
 * @param kvCapacityTokens tokens the KV cache holds, or null when the engine did not say
 * @param limit the longest context (or prompt) the engine will serve, or null when it did not say
 */
public record Capacity(Long kvCapacityTokens, Limit limit) {
    /** Nothing known. */
    public static final Capacity NONE = new Capacity(null, null);

    /** This capacity with what {@code named} names taking precedence where it names it. */
    public Capacity merge(Capacity named) {
        return new Capacity(
                named.kvCapacityTokens != null ? named.kvCapacityTokens : kvCapacityTokens,
                named.limit != null ? named.limit : limit);
    }

    /** The limit's tokens, or null: results' {@code max_context_hint}. */
    public Long maxContextHint() {
        return limit == null ? null : limit.tokens();
    }

    /** What the limit limits when its rule knows better than the profile, else null: results' {@code hint_kind}. */
    public HintKind hintKind() {
        return limit == null ? null : limit.kind();
    }
}
