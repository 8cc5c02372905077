package dev.ctxprobe.explore;

import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.engine.HintKind;

/**
 * What a strategy learns from one finished step: the target, whether a real request proved it,
 * and, for a failure, its class and any capacity the engine named.
 *
 * @param target the prompt length probed (tokens)
 * @param failure null when the step passed
 * @param hintTokens a capacity named by the engine (refusal or capacity line), or null
 * @param hintKind what {@code hintTokens} limits; null when there is no hint
 */
public record Probe(long target, FailureClass failure, Long hintTokens, HintKind hintKind) {

    public boolean passed() {
        return failure == null;
    }
}
