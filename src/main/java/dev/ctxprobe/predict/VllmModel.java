package dev.ctxprobe.predict;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.predict.KvLayers.Full;
import dev.ctxprobe.predict.KvLayers.Group;
import dev.ctxprobe.predict.KvLayers.Sliding;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.util.ArrayList;
import java.util.List;

/**
 * vLLM's rules for one target: the context it is launched with ({@code --max-model-len}), the model's derived
 * limit, the prompt rule, and whether one request of that length fits the KV memory
 * ({@code check_enough_kv_cache_memory}, vllm/v1/core/kv_cache_utils.py).
 */
public final class VllmModel extends EngineModel {
    /** vLLM's sizing, with {@code profile}'s prompt rule. */
    public static Sizing sizing(EngineProfile profile) {
        return new Sizing(profile, VllmModel::new);
    }

    /** vLLM's default since it was raised from 0.9; an experiment should pass it explicitly. */
    private static final double DEFAULT_GPU_MEMORY_UTILIZATION = 0.92;

    private static final Checks.MemoryShare MEMORY = new Checks.MemoryShare(
            "gpu_memory_utilization",
            "the KV cache",
            "vllm/v1/worker/gpu_worker.py determine_available_memory, less what its profile run measures",
            "the activation peak, CUDA graphs and communication buffers vLLM measures at startup are not known before a"
                    + " launch and count as 0: a KV-memory bound is an upper bound");

    private static final long GIB_70 = 70L << 30;
    // DeepSeek-V4 (vllm/model_executor/layers/deepseek_v4_attention.py): 448 B fp8 NoPE + 128 B bf16 RoPE + 7 B
    // scales + 1 B pad per token, pages padded to FlashMLA's 576 B.
    private static final int DSV4_TOKEN_BYTES = 584;
    private static final int DSV4_PAGE_ALIGNMENT = 576;
    // vllm/v1/attention/backends/mla/flashmla_sparse.py: the fp8_ds_mla layout of DeepSeek-V3.2's latent.
    private static final int FP8_DS_MLA_TOKEN_BYTES = 656;

    VllmModel(BackendSetup setup) {
        super(setup);
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        int tp = Checks.count(flags, f, "--tensor-parallel-size", "-tp");
        int pp = Checks.count(flags, f, "--pipeline-parallel-size", "-pp");
        int dcp = Checks.count(flags, f, "--decode-context-parallel-size", "-dcp");
        Checks.devices(s, checks, tp * pp, "tensor-parallel " + tp + " x pipeline-parallel " + pp);

        ModelConfig cfg = s.config();
        ModelConfig.Limit derived = cfg == null ? null : cfg.vllmMaxLength();
        if (cfg != null && derived == null) {
            f.assume("the model config names no maximum length (max_position_embeddings, ...): vLLM's derived"
                    + " limit is not known");
        }
        KvLayers kv = cfg == null ? null : layers(cfg, flags, f, tp, pp, dcp);
        if (kv != null) {
            kv.lines().forEach(l -> details.add("KV per device, " + l));
        }
        // Without a config it is not known whether memory would matter: its inputs are looked up (and listed when
        // missing) all the same.
        Long available = cfg == null || kv != null ? available(flags, f, tp, pp, details) : null;
        long capacity = kv == null || available == null ? -1 : kv.largestFitting(available, BackendSetup.MAX_LENGTH);
        // Requests at once share the KV cache, as many as --max-num-seqs runs together (docs/plan.md#the-capacity-map).
        Long maxNumSeqs = Checks.given(flags, f, "--max-num-seqs", Flags::number);
        f.holds(new SurfacePrediction.Holds(
                capacity < 0 ? null : capacity, null, null, SurfacePrediction.requests(maxNumSeqs), "max_num_seqs"));

        Flags.Found given = flags.find("--max-model-len");
        Long length;
        String relation;
        Bound promptBound = null;
        if (given == null) {
            length = derived == null ? null : derived.tokens();
            relation = "vLLM's default: the model's derived length";
        } else if (given.value().equals("auto") || given.value().equals("-1")) {
            // vllm/v1/core/kv_cache_utils.py auto-fit: the largest length that fits, never above the derived one.
            Long fitted = capacity < 0 ? null : capacity;
            length = fitted == null
                    ? (derived == null ? null : derived.tokens())
                    : derived == null ? fitted : Math.min(fitted, derived.tokens());
            relation = "auto-fit to memory";
            promptBound = fitted != null && (derived == null || fitted < derived.tokens())
                    ? Bound.KV_MEMORY
                    : Bound.MODEL_CONFIG;
            f.input("--max-model-len", given.value(), Source.FLAG, flags.where());
        } else {
            length = Flags.number(given.value());
            relation = length == null ? "unreadable" : s.relation(target, length, s.follows("--max-model-len"));
            f.input("--max-model-len", given.value(), Source.FLAG, flags.where());
        }
        if (length != null
                && length < 1
                && given != null
                && (given.value().equals("auto") || given.value().equals("-1"))) {
            checks.add(new Check(
                    Bound.KV_MEMORY,
                    false,
                    "not one block of KV cache fits (vLLM: \"Cannot auto-fit max_model_len: not enough GPU memory"
                            + " available to serve even a single token\")"));
            return null;
        }
        if (!Checks.usableContext(
                length, f, checks, "max_model_len", "--max-model-len in the command", "max_model_len")) {
            return null;
        }
        String lengthText = "max_model_len " + Format.tokens(length) + " (" + relation + ")";

        if (derived != null && given != null && !Checks.envSwitch(s, f, "VLLM_ALLOW_LONG_MAX_MODEL_LEN")) {
            // vllm/config/model.py _get_and_verify_max_len refuses a length above the derived one.
            Checks.modelLimit(
                    checks,
                    lengthText,
                    length,
                    derived,
                    ", the model's derived max_model_len",
                    ": vLLM refuses to start");
        }

        // vLLM accepts a prompt while prompt + max_tokens <= max_model_len; the profile's rule is for one token.
        long largestPrompt = s.profile.largestPrompt(length);
        boolean promptOk = target <= largestPrompt;
        if (promptBound == null) {
            promptBound = given == null ? Bound.MODEL_CONFIG : BackendSetup.promptBound(s.follows("--max-model-len"));
        }
        checks.add(new Check(
                promptBound,
                promptOk,
                "prompt " + Format.tokens(target) + " + 1 output token " + (promptOk ? "<= " : "> ") + lengthText));

        KvFit fit = null;
        if (kv != null && available != null) {
            long needed = kv.bytes(length);
            fit = new KvFit(length, needed, available, kv.perToken(), kv.fixedBytes(length), capacity);
            boolean ok = needed <= available;
            checks.add(new Check(
                    Bound.KV_MEMORY,
                    ok,
                    "KV cache for " + lengthText + ": " + Format.gib(needed) + (ok ? " needed <= " : " needed > ")
                            + Format.gib(available) + " available per device"
                            + (ok ? "" : " (vLLM: \"To serve at least one request ...\")")));
            details.add("estimated maximum model length: " + Format.tokens(capacity)
                    + " (the largest max_model_len whose KV cache fits, by binary search as vLLM's"
                    + " estimate_max_model_len)");
        }
        return fit;
    }

    /** The KV cache of one rank, layer group by group; null (and noted) for a layout vLLM's rules are not known for. */
    private KvLayers layers(ModelConfig cfg, Flags flags, Facts f, int tp, int pp, int dcp) {
        ModelConfig.Layout layout = cfg.layout();
        if (layout == ModelConfig.Layout.OTHER) {
            f.assume("KV memory not modelled for this model (" + cfg.otherLayoutReason()
                    + "): only the model-config bound applies");
            return null;
        }
        long block = blockSize(flags, f, layout);
        List<Group> groups = new ArrayList<>();
        switch (layout) {
            case FULL, HYBRID_SLIDING -> {
                Integer dtype = kvDtypeBytes(flags, f, cfg);
                if (dtype == null) {
                    return null;
                }
                int heads = Math.max(1, cfg.kvHeads() / tp);
                long perTokenLayer = (long) heads * 2L * cfg.headDim() * dtype;
                String shape = heads + " KV heads x (" + cfg.headDim() + " + " + cfg.headDim() + ") x " + dtype + " B";
                int full = perStage(cfg.fullLayers(), pp);
                groups.add(new Full(
                        "full attention: " + full + " layers x " + shape + " = "
                                + Format.bytes(full * perTokenLayer) + " per token"
                                + (dcp > 1 ? ", split over " + dcp + " decode-context ranks" : ""),
                        full,
                        block,
                        block * perTokenLayer,
                        dcp));
                if (layout == ModelConfig.Layout.HYBRID_SLIDING) {
                    int sliding = perStage(cfg.slidingLayers(), pp);
                    long window = cfg.slidingWindow();
                    long batched = batchedTokens(flags, f);
                    groups.add(new Sliding(
                            "sliding window " + Format.tokens(window) + ": " + sliding + " layers x " + shape
                                    + " for min(window - 1 + max_num_batched_tokens " + Format.tokens(batched)
                                    + ", max_model_len) tokens + 1 block, whatever the length",
                            sliding,
                            window,
                            batched,
                            block,
                            block * perTokenLayer));
                }
            }
            case MLA -> {
                Integer dtype = kvDtypeBytes(flags, f, cfg);
                if (dtype == null) {
                    return null;
                }
                int layers = perStage(cfg.layers(), pp);
                long perToken = (long) (cfg.kvLoraRank() + cfg.ropeHeadDim()) * dtype;
                groups.add(new Full(
                        "MLA latent: " + layers + " layers x (kv_lora_rank " + cfg.kvLoraRank()
                                + " + qk_rope_head_dim " + cfg.ropeHeadDim() + ") x " + dtype + " B = "
                                + Format.bytes(layers * perToken) + " per token, on every tensor-parallel rank",
                        layers,
                        block,
                        block * perToken,
                        dcp));
            }
            case DEEPSEEK_SPARSE -> {
                String dtypeName = kvDtypeName(flags, f);
                boolean fp8 = dtypeName.startsWith("fp8");
                Integer dtype = kvDtypeBytes(flags, f, cfg);
                if (dtype == null) {
                    return null;
                }
                int layers = perStage(cfg.layers(), pp);
                long latent = fp8 ? FP8_DS_MLA_TOKEN_BYTES : (long) (cfg.kvLoraRank() + cfg.ropeHeadDim()) * dtype;
                int index = cfg.indexHeadDim();
                long indexer = cfg.indexerKeyBytes();
                groups.add(new Full(
                        "MLA latent" + (fp8 ? " in the fp8_ds_mla layout: " + latent + " B" : ": " + latent + " B")
                                + " + indexer keys " + indexer + " B (" + index + " fp8 + scales) = "
                                + (latent + indexer) + " B per layer; x " + layers + " layers = "
                                + Format.bytes(layers * (latent + indexer)) + " per token, on every rank",
                        layers,
                        block,
                        block * (latent + indexer),
                        dcp));
            }
            case DEEPSEEK_V4 -> deepseekV4(cfg, flags, f, pp, block, groups);
            default -> throw new IllegalStateException("layout " + layout);
        }
        KvLayers kv = new KvLayers(groups);
        f.assume("KV per device counted as vLLM's kv_cache_interface specs size it; pipeline stages are assumed"
                + " to split each kind of layer evenly");
        return kv;
    }

    /**
     * DeepSeek-V4 (vllm/model_executor/layers/deepseek_v4_attention.py): every layer keeps a 128-token sliding window
     * (SlidingWindowMLASpec), each compressed layer a latent per {@code ratio} tokens (MLAAttentionSpec with
     * compress_ratio, storage block = block / ratio), each ratio-4 layer the indexer's keys; pages padded to 576 B.
     */
    private void deepseekV4(ModelConfig cfg, Flags flags, Facts f, int pp, long block, List<Group> groups) {
        kvDtypeName(flags, f);
        List<Integer> ratios = cfg.compressRatios();
        int all = perStage(ratios.size(), pp);
        int c4 = perStage((int) ratios.stream().filter(r -> r == 4).count(), pp);
        int c128 = perStage((int) ratios.stream().filter(r -> r == 128).count(), pp);
        long window = cfg.slidingWindow() == null ? 128 : cfg.slidingWindow();
        long batched = batchedTokens(flags, f);
        long swaPage = KvLayers.roundUp(block * DSV4_TOKEN_BYTES, DSV4_PAGE_ALIGNMENT);
        groups.add(new Sliding(
                "sliding window " + window + ": " + all + " layers x " + DSV4_TOKEN_BYTES
                        + " B for min(window - 1 + max_num_batched_tokens " + Format.tokens(batched)
                        + ", max_model_len) tokens + 1 block, whatever the length",
                all,
                window,
                batched,
                block,
                swaPage));
        for (int ratio : List.of(4, 128)) {
            int layers = ratio == 4 ? c4 : c128;
            if (layers == 0) {
                continue;
            }
            long page = KvLayers.roundUp(block / ratio * DSV4_TOKEN_BYTES, DSV4_PAGE_ALIGNMENT);
            groups.add(new Full(
                    "compressed latent (ratio " + ratio + "): " + layers + " layers x " + DSV4_TOKEN_BYTES + " B per "
                            + ratio + " tokens, " + Format.bytes(page) + " per " + block + "-token block = "
                            + Format.bytes(Math.round((double) layers * page / block)) + " per token",
                    layers,
                    block,
                    page,
                    1));
        }
        if (c4 > 0) {
            long indexer = cfg.indexerKeyBytes();
            long page = KvLayers.roundUp(block / 4 * indexer, DSV4_PAGE_ALIGNMENT);
            groups.add(new Full(
                    "indexer keys (ratio 4): " + c4 + " layers x " + indexer + " B per 4 tokens, " + Format.bytes(page)
                            + " per block = " + Format.bytes(Math.round((double) c4 * page / block)) + " per token",
                    c4,
                    block,
                    page,
                    1));
        }
        f.assume("DeepSeek-V4 in vLLM: the cache layout is 584 B per token and layer whatever --kv-cache-dtype says;"
                + " the compressor's state caches (bounded by max_num_batched_tokens) and the multi-token-prediction"
                + " layer are not counted");
    }

    private long blockSize(Flags flags, Facts f, ModelConfig.Layout layout) {
        Long given = Checks.given(flags, f, "--block-size", Flags::number);
        if (given != null) {
            return given;
        }
        if (layout == ModelConfig.Layout.DEEPSEEK_V4) {
            f.input("--block-size", "256", Source.DEFAULT, "not in the command");
            f.assume("block size 256 for DeepSeek-V4 (its ratio-128 layers need blocks of at least 128 tokens;"
                    + " the seeds pass --block-size 256)");
            return 256;
        }
        f.input("--block-size", "16", Source.DEFAULT, "vLLM's default");
        return 16;
    }

    private long batchedTokens(Flags flags, Facts f) {
        Long given = Checks.given(flags, f, "--max-num-batched-tokens", Flags::number);
        if (given != null) {
            return given;
        }
        Long memory = s.memoryPerDevice();
        // vllm/engine/arg_utils.py _set_default_args: the API server batches 8192 tokens on devices of 70 GiB or
        // more, 2048 on smaller ones.
        long batched = memory != null && memory < GIB_70 ? 2048 : 8192;
        f.input(
                "--max-num-batched-tokens",
                Long.toString(batched),
                Source.DEFAULT,
                memory == null
                        ? "vLLM's API-server default (8192 for a device of 70 GiB or more, else 2048; the device's"
                                + " memory is not known, 8192 assumed)"
                        : "vLLM's API-server default for a device of " + Format.gib(memory)
                                + " (8192 for 70 GiB or more, else 2048)");
        return batched;
    }

    private String kvDtypeName(Flags flags, Facts f) {
        Flags.Found d = flags.find("--kv-cache-dtype");
        if (d == null) {
            f.input("--kv-cache-dtype", "auto", Source.DEFAULT, "vLLM's default: the model's dtype");
            return "auto";
        }
        f.input("--kv-cache-dtype", d.value(), Source.FLAG, flags.where());
        return Flags.lower(d.value());
    }

    private Integer kvDtypeBytes(Flags flags, Facts f, ModelConfig cfg) {
        String name = kvDtypeName(flags, f);
        Integer bytes = Checks.dtypeBytes(name, cfg);
        if (bytes == null) {
            f.assume("KV cache dtype '" + name + "' is not sized here: only the model-config bound applies");
        }
        return bytes;
    }

    /** Memory the KV cache may use per device, or null (inputs missing). */
    private Long available(Flags flags, Facts f, int tp, int pp, List<String> details) {
        Long bytes = Checks.given(flags, f, "--kv-cache-memory-bytes", Flags::number);
        if (bytes != null) {
            details.add("available for the KV cache per device: " + Format.gib(bytes) + " (--kv-cache-memory-bytes)");
            return bytes;
        }
        Double util = Checks.given(flags, f, "--gpu-memory-utilization", Flags::decimal);
        if (util == null) {
            util = DEFAULT_GPU_MEMORY_UTILIZATION;
            f.input(
                    "--gpu-memory-utilization",
                    "0.92",
                    Source.DEFAULT,
                    "current vLLM's default (0.9 in older releases): pass it explicitly");
        }
        return Checks.leftBesideWeights(s, f, MEMORY, util, tp * pp, details);
    }

    private static int perStage(int layers, int stages) {
        return Math.ceilDiv(layers, stages);
    }
}
