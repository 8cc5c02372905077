package dev.ctxprobe.predict;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.util.List;

/**
 * Engines whose KV sizing is not modelled (TensorRT-LLM, LMDeploy, TGI): the context flag, the model's own limit and
 * the profile's prompt rule, nothing about memory.
 */
public final class ConfigOnlyModel extends EngineModel {
    /** The flags that set the context, any of them. */
    private final List<String> contextFlags;

    private ConfigOnlyModel(BackendSetup setup, List<String> contextFlags) {
        super(setup);
        this.contextFlags = contextFlags;
    }

    /**
     * The sizing of an engine whose context is set by any of {@code contextFlags}, with {@code profile}'s prompt
     * rule.
     */
    public static Sizing sizing(EngineProfile profile, String... contextFlags) {
        List<String> flags = List.of(contextFlags);
        return new Sizing(profile, s -> new ConfigOnlyModel(s, flags));
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        f.assume("KV memory is not modelled for " + s.backend.engine() + ": only the model-config bound and the"
                + " prompt rule apply");
        ModelConfig cfg = s.config();
        ModelConfig.Limit derived = cfg == null ? null : cfg.vllmMaxLength();
        List<String> names = contextFlags;
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
