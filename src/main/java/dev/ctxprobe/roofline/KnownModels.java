package dev.ctxprobe.roofline;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Models whose work a config.json does not tell in full (DeepSeek-V4's public config leaves out its expert sizes):
 * their active parameters from the model card, and the config ctxprobe carries for them, found by the model's name
 * when the model folder is not on this machine (the seeds' files, a plan made away from the cluster).
 */
public final class KnownModels {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * A known model.
     *
     * @param name the name its folder carries, matched without case
     * @param architecture the config's {@code architectures[0]}
     * @param layers the config's {@code num_hidden_layers}
     * @param hidden the config's {@code hidden_size}
     * @param activeParameters parameters a token passes through
     * @param source where that figure comes from
     * @param config the config.json carried in ctxprobe's resources
     */
    record Known(
            String name,
            String architecture,
            int layers,
            int hidden,
            double activeParameters,
            String source,
            String config) {}

    private static final List<Known> KNOWN = List.of(new Known(
            "deepseek-v4-flash",
            "DeepseekV4ForCausalLM",
            43,
            4096,
            13e9,
            "DeepSeek-V4-Flash model card: 13B activated of 284B parameters",
            "deepseek-v4-flash.config.json"));

    private KnownModels() {}

    /** The known model this config describes, or null. */
    static Known of(JsonNode config) {
        JsonNode archs = config.path("architectures");
        String arch = archs.isArray() && !archs.isEmpty() ? archs.get(0).asString() : "";
        for (Known k : KNOWN) {
            if (k.architecture().equals(arch)
                    && config.path("num_hidden_layers").asInt() == k.layers()
                    && config.path("hidden_size").asInt() == k.hidden()) {
                return k;
            }
        }
        return null;
    }

    /** The config ctxprobe carries for a model whose path or name contains a known name (any suffix, e.g. -INT8). */
    public static Carried byName(String model) {
        if (model == null) {
            return null;
        }
        String name = model.toLowerCase(Locale.ROOT);
        for (Known k : KNOWN) {
            if (name.contains(k.name())) {
                try (InputStream in = KnownModels.class.getResourceAsStream(k.config())) {
                    return new Carried(k.name(), JSON.readTree(in));
                } catch (IOException e) {
                    throw new UncheckedIOException("ctxprobe's own copy of " + k.config() + " cannot be read", e);
                }
            }
        }
        return null;
    }

    /** A config carried by ctxprobe for a known model. */
    public record Carried(String name, JsonNode config) {}
}
