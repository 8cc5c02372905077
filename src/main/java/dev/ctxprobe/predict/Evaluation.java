package dev.ctxprobe.predict;

import dev.ctxprobe.results.KvFit;
import java.util.List;

/**
 * An engine's rules applied to one target.
 *
 * @param details how the sizes were computed (bytes per token, memory, pool), the same at every target
 * @param kv the KV memory arithmetic, or null when it was not sized
 */
record Evaluation(long target, List<Check> checks, List<String> details, KvFit kv, Facts facts) {

    Evaluation {
        checks = List.copyOf(checks);
        details = List.copyOf(details);
    }

    boolean fits() {
        return checks.stream().allMatch(Check::passes);
    }

    /** The first rule the target breaks; only for a target that does not fit. */
    Check failure() {
        return checks.stream().filter(c -> !c.passes()).findFirst().orElseThrow();
    }
}
