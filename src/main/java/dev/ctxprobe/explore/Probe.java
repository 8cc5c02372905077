package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.Outcome;

/**
 * What a strategy learns from one finished step: the target, how it ended, and any capacity the engine named.
 *
 * @param target the prompt length probed (tokens)
 * @param hintTokens a capacity named by the engine (refusal or capacity line), or null
 * @param hintKind what {@code hintTokens} limits; null when there is no hint
 * @param hangAtCapacity a timeout at a capacity the server stated (vLLM's scheduling hang): it says little about
 *     longer prompts, so the search checks the step below it first
 * @param correct whether the step's pass keys came back (docs/search.md#the-frontier-of-right-answers); null when
 *     it was not checked
 */
public record Probe(
        long target, Outcome outcome, Long hintTokens, HintKind hintKind, boolean hangAtCapacity, Boolean correct) {

    /** A probe that is no hang at capacity. */
    public Probe(long target, Outcome outcome, Long hintTokens, HintKind hintKind) {
        this(target, outcome, hintTokens, hintKind, false);
    }

    /** A probe whose answer was not checked. */
    public Probe(long target, Outcome outcome, Long hintTokens, HintKind hintKind, boolean hangAtCapacity) {
        this(target, outcome, hintTokens, hintKind, hangAtCapacity, null);
    }

    /** A probe that passed ({@code failure} null) or failed with that class. */
    static Probe of(long target, dev.ctxprobe.results.FailureClass failure, Long hintTokens, HintKind hintKind) {
        return new Probe(target, failure == null ? Outcome.OK : Outcome.failed(failure), hintTokens, hintKind);
    }

    public boolean passed() {
        return outcome.passed();
    }

    /** A failure that answers "too long?" for this target. */
    boolean lengthFailure() {
        return outcome.boundsLength();
    }

    Frontier.Attempt attempt() {
        return new Frontier.Attempt(target, outcome);
    }

    /** The largest target this probe's hint allows (unaligned), or null when it carries none. */
    Long hintTarget(long pad, long promptAllowance) {
        if (hintTokens == null || hintKind == null) {
            return null;
        }
        return hintTokens - (hintKind == HintKind.MAX_MODEL_LEN ? pad : promptAllowance);
    }
}
