package dev.ctxprobe.roofline;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.PrefillFloor.Term;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/**
 * The FLOPs of a model's prefill, read from its {@code config.json} or a GGUF header, counted as docs/results.md
 * ("% of roofline") states: linear work {@code 2 x P_active} a token (embedding look-ups are not FLOPs, the LM head
 * runs for generated tokens only), causal attention {@code 4 x h x d} per earlier row (QK^T and AV), sliding windows
 * capped at the window, MLA over the latent, DeepSeek's compressed and sparse attention with its indexer.
 *
 * @param unknown why the work is not known (a field the count needs is absent); null when it is
 */
public record ModelWork(
        String model, Double linearFlopsPerToken, String linear, List<Term> terms, List<String> notes, String unknown) {

    public ModelWork {
        terms = List.copyOf(terms);
        notes = List.copyOf(notes);
    }

    static ModelWork unknown(String model, String why) {
        return new ModelWork(model, null, null, List.of(), List.of(), why);
    }

    /** A llama-architecture model from its shape (the embedded engine's demo models and GGUF headers). */
    public static ModelWork of(ModelShape s) {
        long h = s.embeddingLength();
        long d = s.headDim();
        long attention = h * s.headCount() * d * 2 + h * s.headCountKv() * d * 2L;
        long mlp = 3 * h * s.feedForwardLength();
        long active = s.blockCount() * (attention + mlp);
        List<Term> terms = List.of(
                new Term(PrefillFloor.ATTENTION, "causal attention", s.blockCount(), 4.0 * s.headCount() * d, 1, null));
        return new ModelWork(
                "model shape " + s.name(),
                2.0 * active,
                "2 x " + count(active) + " parameters a token (" + layers(s.blockCount()) + " of attention "
                        + count(attention) + " + gated MLP " + count(mlp) + ")",
                terms,
                List.of(),
                null);
    }

    /** A Hugging Face config; {@code model} says where it was read. */
    public static ModelWork of(JsonNode config, String model) {
        Config c = new Config(config);
        int layers = c.integer("num_hidden_layers", 0);
        int heads = c.integer("num_attention_heads", 0);
        if (layers == 0 || heads == 0) {
            return unknown(model, "the config has no num_hidden_layers or num_attention_heads");
        }
        List<String> notes = new ArrayList<>();
        List<Term> terms = new ArrayList<>();
        Double linear;
        String linearHow;
        KnownModels.Known known = KnownModels.of(config);
        if (known != null) {
            linear = 2.0 * known.activeParameters();
            linearHow =
                    "2 x " + count(known.activeParameters()) + " active parameters a token (" + known.source() + ")";
        } else {
            Linear l = linear(c, layers, heads);
            if (l.unknown() != null) {
                return unknown(model, l.unknown());
            }
            linear = 2.0 * l.active();
            linearHow = "2 x " + count(l.active()) + " active parameters a token (" + l.how() + ")";
        }
        if (config.path("compress_ratios").isArray()) {
            deepseekV4(c, config, layers, heads, terms);
        } else if (c.has("kv_lora_rank")) {
            double latent = c.integer("kv_lora_rank", 0) + c.integer("qk_rope_head_dim", 0);
            Double topk = c.has("index_topk") ? (double) c.integer("index_topk", 0) : null;
            terms.add(new Term(
                    PrefillFloor.ATTENTION,
                    topk == null ? "MLA over the latent" : "sparse MLA over the top " + topk.longValue() + " rows",
                    layers,
                    4.0 * heads * latent,
                    1,
                    topk));
            notes.add("MLA counted in its absorbed form over kv_lora_rank + qk_rope_head_dim, an upper bound");
            if (topk != null) {
                terms.add(new Term(
                        PrefillFloor.INDEXER,
                        "lightning indexer over every earlier token",
                        layers,
                        2.0 * c.integer("index_n_heads", 64) * c.integer("index_head_dim", 128),
                        1,
                        null));
            }
        } else {
            int d = headDim(c, heads);
            int sliding = slidingLayers(c, config, layers);
            Double window = c.has("sliding_window") ? (double) c.integer("sliding_window", 0) : null;
            if (sliding > 0 && window != null) {
                terms.add(new Term(
                        PrefillFloor.ATTENTION, "sliding-window attention", sliding, 4.0 * heads * d, 1, window));
            } else {
                sliding = 0;
            }
            if (layers - sliding > 0) {
                terms.add(new Term(
                        PrefillFloor.ATTENTION, "causal attention", layers - sliding, 4.0 * heads * d, 1, null));
            }
        }
        return new ModelWork(model, linear, linearHow, terms, notes, null);
    }

    // DeepSeek-V4: every layer attends to a 128-token window of the latent (head_dim wide, K = V); ratio-4 layers add
    // the top index_topk compressed rows found by the indexer, which scores all t/4 of them; ratio-128 layers add all
    // t/128 compressed rows (docs/results.md).
    private static void deepseekV4(Config c, JsonNode config, int layers, int heads, List<Term> terms) {
        int d = c.integer("head_dim", 512);
        double window = c.integer("sliding_window", 128);
        double topk = c.integer("index_topk", 512);
        double row = 4.0 * heads * d;
        int c4 = 0;
        int c128 = 0;
        List<Integer> ratios = new ArrayList<>();
        for (JsonNode r : config.get("compress_ratios")) {
            if (ratios.size() == layers) {
                break;
            }
            ratios.add(r.asInt());
        }
        for (int r : ratios) {
            if (r == 4) {
                c4++;
            } else if (r > 4) {
                c128++;
            }
        }
        // Layers of ratio 0 keep only this window.
        terms.add(new Term(PrefillFloor.ATTENTION, "sliding window of every layer", layers, row, 1, window));
        if (c4 > 0) {
            terms.add(new Term(
                    PrefillFloor.ATTENTION, "top " + (long) topk + " compressed rows (ratio 4)", c4, row, 4, topk));
        }
        int ratio = ratios.stream().filter(r -> r > 4).findFirst().orElse(128);
        if (c128 > 0) {
            terms.add(new Term(
                    PrefillFloor.ATTENTION, "every compressed row (ratio " + ratio + ")", c128, row, ratio, null));
        }
        if (c4 > 0) {
            terms.add(new Term(
                    PrefillFloor.INDEXER,
                    "lightning indexer over every compressed row (ratio 4)",
                    c4,
                    2.0 * c.integer("index_n_heads", 64) * c.integer("index_head_dim", 128),
                    4,
                    null));
        }
    }

    private record Linear(long active, String how, String unknown) {}

    // The parameters a token passes through: attention projections (GQA or MLA) and the MLP, of which an MoE layer
    // runs num_experts_per_tok routed experts, its shared experts and its router (docs/results.md).
    private static Linear linear(Config c, int layers, int heads) {
        long h = c.integer("hidden_size", 0);
        if (h == 0) {
            return new Linear(0, null, "the config has no hidden_size");
        }
        long attention;
        if (c.has("kv_lora_rank")) {
            long q = c.integer("q_lora_rank", 0);
            long nope = c.integer("qk_nope_head_dim", 128);
            long rope = c.integer("qk_rope_head_dim", 64);
            long v = c.integer("v_head_dim", 128);
            long kv = c.integer("kv_lora_rank", 512);
            long qProj = q > 0 ? h * q + q * heads * (nope + rope) : h * heads * (nope + rope);
            attention = qProj + h * (kv + rope) + kv * heads * (nope + v) + heads * v * h;
        } else {
            long d = headDim(c, heads);
            long kvHeads = c.integer("num_key_value_heads", heads);
            attention = 2 * h * heads * d + 2 * h * kvHeads * d;
        }
        long dense = c.integer("intermediate_size", 0);
        int experts = c.integer("n_routed_experts", c.integer("num_local_experts", c.integer("num_experts", 0)));
        int perToken = c.integer("num_experts_per_tok", 0);
        if (experts == 0 || perToken == 0) {
            if (dense == 0) {
                return new Linear(0, null, "the config has no intermediate_size");
            }
            long mlp = 3 * h * dense;
            return new Linear(
                    layers * (attention + mlp),
                    layers(layers) + " of attention " + count(attention) + " + gated MLP " + count(mlp),
                    null);
        }
        long expert = c.integer("moe_intermediate_size", (int) dense);
        if (expert == 0) {
            return new Linear(0, null, "the config has no moe_intermediate_size or intermediate_size");
        }
        long shared = c.integer("n_shared_experts", 0) * expert + c.integer("shared_expert_intermediate_size", 0);
        int denseLayers = Math.min(layers, c.integer("first_k_dense_replace", 0));
        long moe = 3 * h * (perToken * expert + shared) + h * experts;
        long mlp = 3 * h * dense;
        long active = layers * attention + denseLayers * mlp + (layers - denseLayers) * moe;
        return new Linear(
                active,
                layers(layers) + " of attention " + count(attention) + "; " + (layers - denseLayers)
                        + (layers - denseLayers == 1 ? " MoE layer of " : " MoE layers of ")
                        + perToken + " of " + experts + " experts" + (shared > 0 ? " + shared" : "") + " "
                        + count(moe) + (denseLayers > 0 ? "; " + denseLayers + " dense MLP " + count(mlp) : ""),
                null);
    }

    private static int headDim(Config c, int heads) {
        return c.integer("head_dim", c.integer("hidden_size", 0) / heads);
    }

    private static int slidingLayers(Config c, JsonNode config, int layers) {
        JsonNode types = config.path("layer_types");
        if (types.isArray()) {
            int n = 0;
            for (JsonNode t : types) {
                n += t.asString().equals("sliding_attention") ? 1 : 0;
            }
            return n;
        }
        int pattern = c.integer("sliding_window_pattern", 0);
        return pattern < 1 ? 0 : layers - layers / pattern;
    }

    /** A parameter count in words: {@code 13.0B}, {@code 10,240}. */
    /** {@code 1 layer}, {@code 43 layers}. */
    static String layers(long n) {
        return n + (n == 1 ? " layer" : " layers");
    }

    static String count(double n) {
        if (n >= 1e9) {
            return String.format(Locale.ROOT, "%.2fB", n / 1e9);
        }
        if (n >= 1e6) {
            return String.format(Locale.ROOT, "%.1fM", n / 1e6);
        }
        return String.format(Locale.ROOT, "%,.0f", n);
    }

    /** Whole-number fields of a config, a multimodal config's text_config filling what the top level lacks. */
    private record Config(JsonNode root) {
        JsonNode node(String key) {
            JsonNode n = root.get(key);
            if ((n == null || n.isNull()) && root.path("text_config").isObject()) {
                n = root.get("text_config").get(key);
            }
            return n;
        }

        boolean has(String key) {
            JsonNode n = node(key);
            return n != null && n.isNumber();
        }

        int integer(String key, int fallback) {
            JsonNode n = node(key);
            return n != null && n.isNumber() ? n.asInt() : fallback;
        }
    }
}
