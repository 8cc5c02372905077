package dev.ctxprobe.predict;

/** One engine's rules for what a target needs, as its own source applies them. */
interface EngineModel {
    /** Applies the rules to {@code target}: the command is resolved at that target first. */
    Evaluation evaluate(long target);
}
