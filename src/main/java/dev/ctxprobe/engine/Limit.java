package dev.ctxprobe.engine;

import dev.ctxprobe.results.HintKind;

/**
 * A limit an engine named, in its log, its answer or what it states: the tokens, and what they limit. The search
 * steers by it (docs/search.md, "Capacity hints").
 *
 * @param kind what {@code tokens} limits, or null where the rule that read it knows no better than the profile, whose
 *     {@link EngineProfile#hintKind} then applies
 */
public record Limit(long tokens, HintKind kind) {}
