package dev.ctxprobe.engines;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.predict.Sizing;
import java.util.List;
import java.util.Objects;

/**
 * One serving engine: its profile (readiness, the texts of its logs and answers, its self-sizing word), how {@code
 * plan} sizes it, and what a run checks before launching it.
 *
 * @param localModelFlags the options whose value is the model file, for an engine that reads only local files (its
 *     experiment's {@code model} may then be anything); empty for an engine that also accepts a hub id
 */
public record Engine(EngineProfile profile, Sizing sizing, List<String> localModelFlags) {
    public Engine {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(sizing, "sizing");
        if (sizing.profile() != profile) {
            throw new IllegalArgumentException("engine " + profile.name() + " is sized with another profile");
        }
        localModelFlags = List.copyOf(localModelFlags);
    }

    /** The word an experiment's {@code engine:} gives. */
    public String name() {
        return profile.name();
    }

    /** True when the engine reads its model only from a local file, never from a hub. */
    public boolean localModelOnly() {
        return !localModelFlags.isEmpty();
    }
}
