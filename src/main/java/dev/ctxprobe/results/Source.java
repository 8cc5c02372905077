package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Where an input of a prediction came from, so that the output can name it. */
public enum Source {
    /** Read from a file: the model's config.json, its safetensors index, a GGUF header. */
    FILE,
    /** Parsed from the backend's command line, or given to ctxprobe on its own command line. */
    FLAG,
    /** Asked of the machine (nvidia-smi, rocm-smi, xpu-smi). */
    DETECTED,
    /** Declared in the experiment file. */
    EXPERIMENT,
    /** Not given anywhere: the engine's default, which the prediction assumes. */
    DEFAULT;

    @JsonValue
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
