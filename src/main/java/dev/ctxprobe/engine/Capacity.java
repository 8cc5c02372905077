package dev.ctxprobe.engine;

/**
 * What an engine's startup log says about its capacity (spec 04, capacity hints).
 *
 * @param kvCapacityTokens tokens the KV cache holds, or null when the log does not say
 * @param maxContextHint the longest context the engine will serve, or null when the log does not say
 */
public record Capacity(Long kvCapacityTokens, Long maxContextHint) {
    /** Nothing known. */
    public static final Capacity NONE = new Capacity(null, null);

    /** This capacity with the numbers a failure named taking precedence where it named them. */
    public Capacity merge(Long kvTokens, Long hint) {
        return new Capacity(kvTokens != null ? kvTokens : kvCapacityTokens, hint != null ? hint : maxContextHint);
    }
}
