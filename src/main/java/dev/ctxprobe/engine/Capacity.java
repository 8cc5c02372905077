package dev.ctxprobe.engine;

/**
 * What an engine's startup log says about its capacity (spec 04, capacity hints).
 *
 * @param kvCapacityTokens tokens the KV cache holds, or null when the log does not say
 * @param maxContextHint the longest context the engine will serve, or null when the log does not say
 */
public record Capacity(Long kvCapacityTokens, Long maxContextHint) {}
