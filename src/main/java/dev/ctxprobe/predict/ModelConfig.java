package dev.ctxprobe.predict;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The fields of a Hugging Face {@code config.json} that size the KV cache and bound the context, read the way the
 * engines read them. A multimodal config's {@code text_config} fills the keys the top level lacks, as SGLang's
 * {@code get_hf_text_config} merge does.
 */
public final class ModelConfig {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    // vllm/config/model.py _get_and_verify_max_len: every key present counts, the smallest wins.
    private static final List<String> VLLM_LENGTH_KEYS = List.of(
            "max_position_embeddings",
            "n_positions",
            "max_seq_len",
            "seq_length",
            "model_max_length",
            "max_target_positions",
            "max_sequence_length",
            "max_seq_length",
            "seq_len");

    // sglang/srt/utils/hf_transformers_utils.py CONTEXT_LENGTH_KEYS: the first key present wins.
    private static final List<String> SGLANG_LENGTH_KEYS =
            List.of("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings");

    /** The attention layouts whose KV cache is sized here. */
    public enum Layout {
        /** Every layer keeps K and V for every token (MHA, GQA, MQA). */
        FULL,
        /** Full-attention layers mixed with sliding-window layers (Gemma 3 style {@code layer_types}). */
        HYBRID_SLIDING,
        /** Multi-head latent attention: one latent vector per token and layer (DeepSeek V2/V3, Kimi). */
        MLA,
        /** MLA with the sparse-attention indexer of DeepSeek-V3.2. */
        DEEPSEEK_SPARSE,
        /** DeepSeek-V4: compressed layers (ratios 4 and 128) plus a sliding window in every layer. */
        DEEPSEEK_V4,
        /** A layout ctxprobe does not size (linear attention, state-space layers, ...). */
        OTHER
    }

    /** A length limit from the config, with the key it came from. */
    public record Limit(long tokens, String explanation) {}

    private final Path file;
    private final JsonNode root;

    private ModelConfig(Path file, JsonNode root) {
        this.file = file;
        this.root = root;
    }

    /** Reads {@code file}; the exception's message says in one sentence what is wrong with it. */
    public static ModelConfig read(Path file) throws IOException {
        JsonNode node;
        try {
            node = JSON.readTree(Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new IOException("no such file", e);
        } catch (JacksonException e) {
            throw new IOException("not valid JSON (" + e.getOriginalMessage() + ")", e);
        }
        if (!(node instanceof ObjectNode object)) {
            throw new IOException("not a JSON object");
        }
        JsonNode text = object.get("text_config");
        if (text instanceof ObjectNode textConfig) {
            ObjectNode merged = object.deepCopy();
            for (var entry : textConfig.properties()) {
                if (!merged.has(entry.getKey()) && !entry.getValue().isNull()) {
                    merged.set(entry.getKey(), entry.getValue());
                }
            }
            object = merged;
        }
        return new ModelConfig(file, object);
    }

    public Path file() {
        return file;
    }

    public String architecture() {
        JsonNode archs = root.path("architectures");
        return archs.isArray() && !archs.isEmpty() ? archs.get(0).asString() : text("model_type", "unknown");
    }

    String modelType() {
        return text("model_type", "");
    }

    /** A whole-number field, or null when absent or null. */
    Long number(String key) {
        JsonNode n = root.get(key);
        return n != null && n.isNumber() ? n.asLong() : null;
    }

    private String text(String key, String fallback) {
        JsonNode n = root.get(key);
        return n != null && n.isString() ? n.asString() : fallback;
    }

    private boolean has(String key) {
        JsonNode n = root.get(key);
        return n != null && !n.isNull();
    }

    public int layers() {
        Long n = number("num_hidden_layers");
        if (n == null) {
            n = number("n_layer");
        }
        return n == null ? 0 : Math.toIntExact(n);
    }

    int attentionHeads() {
        Long n = number("num_attention_heads");
        return n == null ? 0 : Math.toIntExact(n);
    }

    int kvHeads() {
        Long n = number("num_key_value_heads");
        return n == null ? attentionHeads() : Math.toIntExact(n);
    }

    int headDim() {
        Long n = number("head_dim");
        if (n != null) {
            return Math.toIntExact(n);
        }
        Long hidden = number("hidden_size");
        return hidden == null || attentionHeads() == 0 ? 0 : Math.toIntExact(hidden / attentionHeads());
    }

    /** Bytes of one element in the model's dtype ({@code torch_dtype}, or {@code dtype} in newer configs). */
    int modelDtypeBytes() {
        String dtype = text("torch_dtype", text("dtype", "bfloat16")).toLowerCase(Locale.ROOT);
        return dtype.contains("32") ? 4 : 2;
    }

    /** Which KV layout the config describes. */
    public Layout layout() {
        if (root.path("compress_ratios").isArray()) {
            return Layout.DEEPSEEK_V4;
        }
        if (has("kv_lora_rank")) {
            return has("index_topk") ? Layout.DEEPSEEK_SPARSE : Layout.MLA;
        }
        if (root.path("layer_types").isArray()) {
            for (JsonNode t : root.get("layer_types")) {
                String type = t.asString();
                if (!type.equals("full_attention") && !type.equals("sliding_attention")) {
                    return Layout.OTHER;
                }
            }
            return slidingLayers() > 0 ? Layout.HYBRID_SLIDING : Layout.FULL;
        }
        if (has("sliding_window_pattern") && has("sliding_window")) {
            return Layout.HYBRID_SLIDING;
        }
        return Layout.FULL;
    }

    /** Why the layout is not sized, for {@link Layout#OTHER}. */
    String otherLayoutReason() {
        List<String> types = new ArrayList<>();
        for (JsonNode t : root.path("layer_types")) {
            String type = t.asString();
            if (!type.equals("full_attention") && !type.equals("sliding_attention") && !types.contains(type)) {
                types.add(type);
            }
        }
        return "layer types " + String.join(", ", types);
    }

    /** Sliding-window layers: from {@code layer_types}, else every layer but each {@code sliding_window_pattern}-th. */
    int slidingLayers() {
        if (root.path("layer_types").isArray()) {
            int n = 0;
            for (JsonNode t : root.get("layer_types")) {
                if (t.asString().equals("sliding_attention")) {
                    n++;
                }
            }
            return n;
        }
        Long pattern = number("sliding_window_pattern");
        if (pattern == null || pattern < 1) {
            return 0;
        }
        // Gemma 3 (transformers): layer i is global when (i + 1) % pattern == 0, sliding otherwise.
        int layers = layers();
        return layers - (int) (layers / pattern);
    }

    int fullLayers() {
        return layers() - slidingLayers();
    }

    Long slidingWindow() {
        return number("sliding_window");
    }

    int kvLoraRank() {
        return Math.toIntExact(number("kv_lora_rank"));
    }

    int ropeHeadDim() {
        Long n = number("qk_rope_head_dim");
        return n == null ? 0 : Math.toIntExact(n);
    }

    int indexHeadDim() {
        Long n = number("index_head_dim");
        return n == null ? 128 : Math.toIntExact(n);
    }

    /** Bytes of one token's indexer key in one layer: index_head_dim fp8 values and a 4-byte scale per 128 of them. */
    long indexerKeyBytes() {
        int index = indexHeadDim();
        return index + index / 128 * 4L;
    }

    /**
     * The compression ratio of each of the model's own layers (the entries past {@code num_hidden_layers} belong
     * to the multi-token-prediction layers).
     */
    List<Integer> compressRatios() {
        List<Integer> ratios = new ArrayList<>();
        for (JsonNode r : root.path("compress_ratios")) {
            if (ratios.size() == layers()) {
                break;
            }
            ratios.add(r.asInt());
        }
        return ratios;
    }

    /** The length vLLM derives from the config ({@code _get_and_verify_max_len}); null when no key is present. */
    Limit vllmMaxLength() {
        Long smallest = null;
        String key = null;
        for (String k : VLLM_LENGTH_KEYS) {
            Long v = number(k);
            if (v != null && (smallest == null || v < smallest)) {
                smallest = v;
                key = k;
            }
        }
        if (smallest == null) {
            return null;
        }
        String why = key + " " + Format.tokens(smallest);
        JsonNode rope = root.get("rope_scaling");
        if (rope != null && rope.isObject() && !modelType().contains("gemma3")) {
            String type = rope.path("rope_type").asString(rope.path("type").asString("default"));
            double factor = rope.path("factor").asDouble(1.0);
            if (!List.of("su", "longrope", "llama3").contains(type) && factor != 1.0) {
                long base = smallest;
                if (type.equals("yarn") && rope.has("original_max_position_embeddings")) {
                    base = rope.get("original_max_position_embeddings").asLong();
                    why = "rope_scaling.original_max_position_embeddings " + Format.tokens(base);
                }
                smallest = (long) (base * factor);
                why += " x rope_scaling.factor " + Format.decimal(factor);
            }
        }
        return new Limit(smallest, why);
    }

    /** The context length SGLang derives ({@code get_context_length}); null when no key is present. */
    Limit sglangContextLength() {
        double factor = 1.0;
        JsonNode rope = root.get("rope_scaling");
        if (rope != null && rope.isObject()) {
            factor = rope.path("factor").asDouble(1.0);
            if (rope.has("original_max_position_embeddings")
                    || rope.path("rope_type").asString("").equals("llama3")) {
                factor = 1.0;
            }
        }
        for (String key : SGLANG_LENGTH_KEYS) {
            Long v = number(key);
            if (v != null) {
                String why = key + " " + Format.tokens(v);
                if (factor != 1.0) {
                    why += " x rope_scaling.factor " + Format.decimal(factor);
                }
                return new Limit((long) (v * factor), why);
            }
        }
        return null;
    }
}
