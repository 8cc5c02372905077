package dev.ctxprobe.engines;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.predict.Sizing;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The engines this ctxprobe knows, registered here and nowhere else; each is defined in its own file. The search, the
 * client, {@code plan} and the run's checks ask this registry, never an engine's name.
 */
public final class Engines {
    private static final Map<String, Engine> BY_NAME = index(
            Vllm.ENGINE,
            Sglang.ENGINE,
            Sglang.KUNLUN,
            LlamaCpp.ENGINE,
            Trtllm.ENGINE,
            Lmdeploy.ENGINE,
            Tgi.ENGINE,
            Embedded.ENGINE,
            OpenAi.ENGINE);

    private Engines() {}

    /** The engine of that name. */
    public static Engine get(String name) {
        Engine engine = BY_NAME.get(name);
        if (engine == null) {
            throw new IllegalArgumentException(
                    "unknown engine '" + name + "'; known engines: " + String.join(", ", BY_NAME.keySet()));
        }
        return engine;
    }

    /** The profile of the engine of that name. */
    public static EngineProfile profile(String name) {
        return get(name).profile();
    }

    /** How {@code plan} sizes the engine of that name. */
    public static Sizing sizing(String name) {
        return get(name).sizing();
    }

    /** The known engine names, in registration order. */
    public static Set<String> names() {
        return Collections.unmodifiableSet(BY_NAME.keySet());
    }

    private static Map<String, Engine> index(Engine... engines) {
        Map<String, Engine> byName = new LinkedHashMap<>();
        for (Engine e : engines) {
            if (byName.put(e.name(), e) != null) {
                throw new IllegalStateException("engine '" + e.name() + "' is registered twice");
            }
        }
        return byName;
    }
}
