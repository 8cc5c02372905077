package dev.ctxprobe.report;

/** ctxprobe's {@code verification} object: the token counts the server reported for the target. */
public record Verification(Long targetLen, Long promptTokens, Long completionTokens, Boolean exact) {}
