package dev.ctxprobe.predict;

import dev.ctxprobe.engine.EngineProfile;
import java.util.function.Function;

/**
 * How {@code plan} sizes one engine's backends: the engine's profile (its prompt rule) and its model of what a target
 * needs. Each engine names its sizing where it is registered ({@code dev.ctxprobe.engines}); the models offer theirs
 * ({@link VllmModel#sizing}, {@link ConfigOnlyModel#sizing} for an engine whose memory is not modelled).
 */
public final class Sizing {
    private final EngineProfile profile;
    private final Function<BackendSetup, EngineModel> model;

    Sizing(EngineProfile profile, Function<BackendSetup, EngineModel> model) {
        this.profile = profile;
        this.model = model;
    }

    /** Nothing is predicted: an endpoint that is already running, which ctxprobe does not launch. */
    public static Sizing none(EngineProfile profile) {
        return new Sizing(profile, null);
    }

    /** The profile whose prompt rule the sizing applies. */
    public EngineProfile profile() {
        return profile;
    }

    /** The engine's model for one backend, or null when nothing is predicted. */
    EngineModel model(BackendSetup setup) {
        return model == null ? null : model.apply(setup);
    }
}
