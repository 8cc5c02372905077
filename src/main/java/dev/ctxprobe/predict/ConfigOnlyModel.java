package dev.ctxprobe.predict;

import java.util.List;
import java.util.Map;

/**
 * Engines whose KV sizing is not modelled (TensorRT-LLM, LMDeploy, TGI): the context flag, the model's own limit and
 * the profile's prompt rule, nothing about memory.
 */
final class ConfigOnlyModel extends EngineModel {
    /** The flag that sets the context, per engine profile. */
    private static final Map<String, List<String>> CONTEXT_FLAGS = Map.of(
            "trtllm", List.of("--max_seq_len", "--max-seq-len"),
            "lmdeploy", List.of("--session-len"),
            "tgi", List.of("--max-total-tokens"));

    ConfigOnlyModel(BackendSetup setup) {
        super(setup);
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        f.assume("KV memory is not modelled for " + s.backend.engine() + ": only the model-config bound and the"
                + " prompt rule apply");
        ModelConfig cfg = s.config();
        ModelConfig.Limit derived = cfg == null ? null : cfg.vllmMaxLength();
        List<String> names = CONTEXT_FLAGS.getOrDefault(s.backend.engine(), List.of());
        Flags.Found given = flags.find(names.toArray(String[]::new));
        Long length = given == null ? (derived == null ? null : derived.tokens()) : Flags.number(given.value());
        if (given != null) {
            f.input(given.name(), given.value(), Source.FLAG, flags.where());
        }
        if (!Checks.usableContext(
                length, f, checks, "context length", "the context flag " + String.join("/", names), "context")) {
            return null;
        }
        boolean follows = s.follows(names.toArray(String[]::new));
        String lengthText = "context " + Format.tokens(length) + " ("
                + (given == null ? "the model's own length" : s.relation(target, length, follows)) + ")";
        if (derived != null && given != null) {
            Checks.modelLimit(checks, lengthText, length, derived, "", "");
        }
        long largest = s.profile.largestPrompt(length);
        boolean ok = target <= largest;
        checks.add(new Check(
                given == null ? Bound.MODEL_CONFIG : BackendSetup.promptBound(follows),
                ok,
                "prompt " + Format.tokens(target) + (ok ? " <= " : " > ") + Format.tokens(largest)
                        + ", the largest prompt the engine accepts in a " + lengthText));
        return null;
    }
}
