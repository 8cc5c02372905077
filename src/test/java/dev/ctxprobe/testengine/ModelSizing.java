package dev.ctxprobe.testengine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The KV capacity the test engine's vLLM and SGLang modes derive from a model's {@code config.json} and the flags the
 * real engines size it with, instead of a given {@code --capacity}: a full-attention model (every layer keeps K and V
 * of {@code num_key_value_heads / tp} heads for every token), the device memory times the engine's fraction, less the
 * weights of one rank.
 *
 * <ul>
 *   <li>vLLM ({@code determine_available_memory} in vllm/v1/worker/gpu_worker.py, {@code FullAttentionSpec} pages of
 *       {@code --block-size} tokens): the largest max_model_len whose blocks fit, in whole blocks.
 *   <li>SGLang ({@code MemoryPoolConfigurator}): {@code max_total_num_tokens} = available / bytes per token, in whole
 *       pages of {@code --page-size}.
 * </ul>
 *
 * The machine is the test's to declare: {@code --device-memory-gib} and {@code --weights-gib} stand for what the real
 * engine would measure. The config's {@code max_position_embeddings} is the model's own limit unless
 * {@code --derived-max} gives one.
 */
final class ModelSizing {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final double GIB = 1L << 30;

    /** The options read here, each taking a value. */
    static final Set<String> OPTIONS = Set.of(
            "--model-config",
            "--device-memory-gib",
            "--weights-gib",
            "--gpu-memory-utilization",
            "--mem-fraction-static",
            "--tensor-parallel-size",
            "--tp-size",
            "--kv-cache-dtype",
            "--block-size",
            "--page-size");

    private final Map<String, String> values = new HashMap<>();

    void put(String option, String value) {
        values.put(option, value);
    }

    /** True when a model config was given: the capacity is derived, not taken from {@code --capacity}. */
    boolean given() {
        return values.containsKey("--model-config");
    }

    /** The model's own limit, {@code max_position_embeddings}, or null when the config names none. */
    Long maxPositions() {
        JsonNode n = config(Path.of(values.get("--model-config"))).get("max_position_embeddings");
        return n != null && n.isNumber() ? n.asLong() : null;
    }

    /** The capacity in tokens for {@code mode}: vLLM's largest max_model_len, SGLang's pool. */
    long capacity(EngineOptions.Mode mode) {
        JsonNode config = config(Path.of(values.get("--model-config")));
        long layers = config.path("num_hidden_layers").asLong();
        long heads = config.path("num_attention_heads").asLong();
        long kvHeads = config.has("num_key_value_heads")
                ? config.path("num_key_value_heads").asLong()
                : heads;
        long headDim = config.has("head_dim")
                ? config.path("head_dim").asLong()
                : config.path("hidden_size").asLong() / heads;
        long tp = number(mode == EngineOptions.Mode.SGLANG ? "--tp-size" : "--tensor-parallel-size", 1);
        String dtype = values.getOrDefault("--kv-cache-dtype", "auto");
        long dtypeBytes = dtype.startsWith("fp8") ? 1 : 2;
        long bytesPerToken = layers * 2 * Math.max(1, kvHeads / tp) * headDim * dtypeBytes;

        double fraction = mode == EngineOptions.Mode.SGLANG
                ? decimal("--mem-fraction-static", null)
                : decimal("--gpu-memory-utilization", 0.92);
        long memory = Math.round(decimal("--device-memory-gib", null) * GIB);
        long weights = Math.round(decimal("--weights-gib", 0.0) * GIB);
        long available = Math.round(memory * fraction) - weights / tp;
        if (available <= 0) {
            return 0;
        }
        return switch (mode) {
            case VLLM -> {
                long block = number("--block-size", 16);
                yield available / (block * bytesPerToken) * block;
            }
            case SGLANG -> {
                long page = number("--page-size", 1);
                yield available / bytesPerToken / page * page;
            }
            default -> throw new IllegalArgumentException("--model-config sizes the vllm and sglang modes only");
        };
    }

    private static JsonNode config(Path file) {
        try {
            return JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException("argument --model-config: cannot read " + file, e);
        }
    }

    private long number(String option, long fallback) {
        String v = values.get(option);
        return v == null ? fallback : Long.parseLong(v);
    }

    private double decimal(String option, Double fallback) {
        String v = values.get(option);
        if (v == null) {
            if (fallback == null) {
                throw new IllegalArgumentException(
                        "the following arguments are required with --model-config: " + option);
            }
            return fallback;
        }
        return Double.parseDouble(v);
    }
}
