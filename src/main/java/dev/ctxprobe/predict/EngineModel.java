package dev.ctxprobe.predict;

import dev.ctxprobe.results.KvFit;
import java.util.ArrayList;
import java.util.List;

/** One engine's rules for what a target needs, as its own source applies them. */
abstract class EngineModel {
    final BackendSetup s;

    EngineModel(BackendSetup setup) {
        this.s = setup;
    }

    /** Applies the rules to {@code target}: the command is resolved at that target first. */
    final Evaluation evaluate(long target) {
        Facts f = new Facts();
        Flags flags = s.flagsAt(target);
        List<Check> checks = new ArrayList<>();
        List<String> details = new ArrayList<>();
        KvFit kv = apply(target, flags, f, checks, details);
        return new Evaluation(target, checks, details, kv, f);
    }

    /**
     * The engine's rules at {@code target} with the command resolved there ({@code flags}), adding what they used to
     * {@code f}, the rules they applied to {@code checks} and how sizes were computed to {@code details}.
     *
     * @return the KV memory arithmetic, or null when it was not sized
     */
    abstract KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details);
}
