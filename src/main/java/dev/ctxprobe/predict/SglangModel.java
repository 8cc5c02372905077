package dev.ctxprobe.predict;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.util.List;

/**
 * SGLang's rules for one target. It starts with any context length up to the model's; the token pool is sized from
 * memory ({@code MemoryPoolConfigurator}, python/sglang/srt/model_executor/pool_configurator.py), and a prompt is
 * accepted while it is shorter than {@code max_req_input_len = min(context_len - 1, max_total_num_tokens - 1) - 5}
 * (tp_worker.py; validate_input_length in scheduler.py refuses {@code len >= max_req_input_len}).
 */
public final class SglangModel extends EngineModel {
    /** SGLang's sizing, with {@code profile}'s prompt rule. */
    public static Sizing sizing(EngineProfile profile) {
        return new Sizing(profile, SglangModel::new);
    }

    private static final Checks.MemoryShare MEMORY = new Checks.MemoryShare(
            "mem_fraction_static",
            "the pool",
            "model_runner_kv_cache_mixin.py: free memory after loading - total x (1 - mem_fraction_static)",
            "memory SGLang's processes hold before the weights load (CUDA context, communication buffers) is not known"
                    + " before a launch and counts as 0: a KV-memory bound is an upper bound");

    /** ServerArgs.swa_full_tokens_ratio. */
    private static final double SWA_RATIO = 0.8;
    /** SGLang's DeepSeek-V4 defaults replace an unset ratio with 0.1 and unset max_running_requests with 256. */
    private static final double DSV4_SWA_RATIO = 0.1;

    private static final long DSV4_MAX_RUNNING_REQUESTS = 256;
    private static final int FP8_DSA_LATENT_BYTES = 656;

    /**
     * Tokens below min(context_len, max_total_num_tokens) a prompt cannot use: the -1, the -5 and the {@code >=},
     * as the profile's prompt rule has them.
     */
    private final long reserve;

    SglangModel(BackendSetup setup) {
        super(setup);
        reserve = setup.profile.promptAllowance();
    }

    /** The token pool of one rank: bytes per token, request-scoped bytes, page size. */
    private record Pool(double bytesPerToken, long fixedBytes, long pageSize) {}

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        int tp = Checks.count(flags, f, "--tp-size", "--tp", "--tensor-parallel-size");
        int pp = Checks.count(flags, f, "--pp-size", "--pipeline-parallel-size");
        Checks.devices(s, checks, tp * pp, "tensor-parallel " + tp + " x pipeline-parallel " + pp);

        ModelConfig cfg = s.config();
        ModelConfig.Limit derived = cfg == null ? null : cfg.sglangContextLength();
        Flags.Found given = flags.find("--context-length");
        Long length = given == null ? (derived == null ? null : derived.tokens()) : Flags.number(given.value());
        if (given != null) {
            f.input("--context-length", given.value(), Source.FLAG, flags.where());
        }
        if (!Checks.usableContext(
                length, f, checks, "context length", "--context-length in the command", "context_length")) {
            return null;
        }
        boolean follows = s.follows("--context-length");
        String relation =
                given == null ? "SGLang's default: the model's context length" : s.relation(target, length, follows);
        String lengthText = "context_length " + Format.tokens(length) + " (" + relation + ")";

        if (derived != null && given != null && !Checks.envSwitch(s, f, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")) {
            // python/sglang/srt/configs/model_config.py refuses a context_length above the derived one.
            Checks.modelLimit(
                    checks, lengthText, length, derived, ", the model's context length", ": SGLang refuses to start");
        }

        boolean reserveOk = target <= s.profile.largestPrompt(length);
        checks.add(new Check(
                given == null ? Bound.MODEL_CONFIG : follows ? Bound.ENGINE_RESERVE : Bound.CONTEXT_FLAG,
                reserveOk,
                "prompt " + Format.tokens(target) + (reserveOk ? " <= " : " > ") + lengthText + " - " + reserve
                        + " (max_req_input_len = context_len - 1 - 5, and the prompt must stay below it)"));

        Pool pool = cfg == null ? null : pool(cfg, flags, f, tp, pp, details);
        Long available = cfg == null || pool != null ? available(flags, f, tp, pp, details) : null;
        Flags.Found maxTotal = flags.find("--max-total-tokens");
        Long capped = maxTotal == null ? null : Flags.number(maxTotal.value());
        if (capped != null) {
            f.input("--max-total-tokens", maxTotal.value(), Source.FLAG, flags.where());
        }
        Long tokens = null;
        KvFit fit = null;
        if (pool != null && available != null) {
            long full = (long) Math.floor(Math.max(0, available - pool.fixedBytes()) / pool.bytesPerToken());
            tokens = full / pool.pageSize() * pool.pageSize();
            String fixed = pool.fixedBytes() == 0 ? "" : " - " + Format.gib(pool.fixedBytes()) + " fixed";
            details.add("max_total_num_tokens = (" + Format.gib(available) + fixed + ") / "
                    + Format.decimal(pool.bytesPerToken()) + " B, in pages of " + pool.pageSize() + " = "
                    + Format.tokens(tokens));
            long needed = pool.fixedBytes() + (long) Math.ceil((target + reserve) * pool.bytesPerToken());
            fit = new KvFit(target + reserve, needed, available, pool.bytesPerToken(), pool.fixedBytes(), tokens);
        }
        if (capped != null && (tokens == null || capped < tokens)) {
            details.add("--max-total-tokens caps the pool at " + Format.tokens(capped));
            tokens = capped;
        }
        // Requests at once share the token pool, as many as --max-running-requests runs together
        // (docs/plan.md#the-capacity-map).
        Long running = Checks.given(flags, f, "--max-running-requests", Flags::number);
        f.holds(new SurfacePrediction.Holds(
                tokens, null, null, SurfacePrediction.requests(running), "max_running_requests"));
        if (tokens != null) {
            boolean ok = target <= s.profile.largestPrompt(tokens);
            checks.add(new Check(
                    Bound.KV_MEMORY,
                    ok,
                    "prompt " + Format.tokens(target) + (ok ? " <= " : " > ") + "max_total_num_tokens "
                            + Format.tokens(tokens) + " - " + reserve + " (the token pool)"));
        }
        return fit;
    }

    /** Bytes per pool token on one rank, as the configurator for the model's layout computes them. */
    private Pool pool(ModelConfig cfg, Flags flags, Facts f, int tp, int pp, List<String> lines) {
        ModelConfig.Layout layout = cfg.layout();
        if (layout == ModelConfig.Layout.OTHER) {
            f.assume("KV memory not modelled for this model (" + cfg.otherLayoutReason()
                    + "): only the model-config bound applies");
            return null;
        }
        if (layout == ModelConfig.Layout.DEEPSEEK_V4) {
            return deepseekV4(cfg, flags, f, pp, lines);
        }
        String dtypeName = dtypeName(flags, f, "auto");
        Integer kvSize = Checks.dtypeBytes(dtypeName, cfg);
        if (kvSize == null) {
            f.assume("KV cache dtype '" + dtypeName + "' is not sized here: only the model-config bound applies");
            return null;
        }
        long page = pageSize(flags, f, layout == ModelConfig.Layout.DEEPSEEK_SPARSE ? 64 : 1);
        int layers = Math.ceilDiv(cfg.layers(), pp);
        double cell;
        switch (layout) {
            case FULL -> {
                int heads = Math.max(1, cfg.kvHeads() / tp);
                cell = (double) heads * 2 * cfg.headDim() * layers * kvSize;
                lines.add("cell (DefaultPoolConfigurator): " + heads + " KV heads x (" + cfg.headDim() + " + "
                        + cfg.headDim() + ") x " + layers + " layers x " + kvSize + " B = " + Format.decimal(cell)
                        + " B per token");
            }
            case HYBRID_SLIDING -> {
                int heads = Math.max(1, cfg.kvHeads() / tp);
                double perLayer = (double) heads * 2 * cfg.headDim() * kvSize;
                int full = Math.ceilDiv(cfg.fullLayers(), pp);
                int sliding = Math.ceilDiv(cfg.slidingLayers(), pp);
                double ratio = swaRatio(flags, f, SWA_RATIO, "ServerArgs' default");
                cell = perLayer * full + ratio * perLayer * sliding;
                lines.add("cell (HybridSWAPoolConfigurator): " + Format.decimal(perLayer) + " B x " + full
                        + " full layers + swa_full_tokens_ratio " + Format.decimal(ratio) + " x "
                        + Format.decimal(perLayer) + " B x " + sliding + " sliding layers = " + Format.decimal(cell)
                        + " B per token");
            }
            case MLA -> {
                cell = (double) (cfg.kvLoraRank() + cfg.ropeHeadDim()) * layers * kvSize;
                lines.add("cell (DefaultPoolConfigurator, MLA): (kv_lora_rank " + cfg.kvLoraRank()
                        + " + qk_rope_head_dim " + cfg.ropeHeadDim() + ") x " + layers + " layers x " + kvSize
                        + " B = " + Format.decimal(cell) + " B per token");
            }
            case DEEPSEEK_SPARSE -> {
                // calculate_mla_kv_cache_dim: fp8 stores kv_lora_rank + its scales + a bf16 rope part.
                boolean fp8 = Flags.lower(dtypeName).startsWith("fp8");
                long latent = fp8 ? FP8_DSA_LATENT_BYTES : (long) (cfg.kvLoraRank() + cfg.ropeHeadDim()) * kvSize;
                long indexer = cfg.indexerKeyBytes();
                cell = (double) (latent + indexer) * layers;
                lines.add("cell (DefaultPoolConfigurator, DSA): (latent " + Format.decimal(latent) + " B + indexer "
                        + indexer + " B) x " + layers + " layers = " + Format.decimal(cell) + " B per token");
            }
            default -> throw new IllegalStateException("layout " + layout);
        }
        return new Pool(cell, 0, page);
    }

    /**
     * DSV4PoolConfigurator: {@code _get_bytes_per_full_token} for the full/swa/c4/c128 pools and the c4 state
     * rings, inflated by (layers + 1) / layers for a speculative draft, plus the request-scoped c128 state.
     */
    private Pool deepseekV4(ModelConfig cfg, Flags flags, Facts f, int pp, List<String> lines) {
        String dtypeName = dtypeName(flags, f, "fp8_e4m3");
        if (!Flags.lower(dtypeName).startsWith("fp8")) {
            f.assume("DeepSeek-V4 with KV cache dtype '" + dtypeName + "' is not sized here (upstream SGLang sizes"
                    + " its fp8_e4m3 layout only): only the model-config bound applies");
            return null;
        }
        List<Integer> ratios = cfg.compressRatios();
        int all = Math.ceilDiv(ratios.size(), pp);
        int c4 = Math.ceilDiv((int) ratios.stream().filter(r -> r == 4).count(), pp);
        int c128 = Math.ceilDiv((int) ratios.stream().filter(r -> r == 128).count(), pp);
        int rope = cfg.ropeHeadDim();
        int nope = cfg.headDim() - rope;
        long kvBytes = nope + rope * 2L + 8;
        int index = cfg.indexHeadDim();
        long indexerBytes = cfg.indexerKeyBytes();
        long window = cfg.slidingWindow() == null ? 128 : cfg.slidingWindow();
        double ratio = swaRatio(flags, f, DSV4_SWA_RATIO, "SGLang's DeepSeek-V4 default (0.8 for other models)");
        Flags.Found spec = flags.find("--speculative-algorithm");
        boolean speculative = spec != null && !Flags.lower(spec.value()).equals("none");
        if (speculative) {
            f.input("--speculative-algorithm", spec.value(), Source.FLAG, flags.where());
        }
        boolean online = Checks.truthy(s.env("SGLANG_OPT_USE_ONLINE_COMPRESS"));
        String stateDtype = s.env("SGLANG_DSV4_COMPRESS_STATE_DTYPE");
        int state = stateDtype != null && Flags.lower(stateDtype).startsWith("b") ? 2 : 4;
        int c4Ring = speculative ? 16 : 8;
        int c128Ring = online ? 1 : speculative ? 256 : 128;
        int attnHeadDim = nope + rope;
        double c4StateRatio = (double) c4Ring / window;
        double c4State = 2.0 * 2 * attnHeadDim * state;
        double c4IndexerState = 2.0 * 2 * index * state;
        double perToken = ratio * kvBytes * all
                + kvBytes * c4 / 4.0
                + kvBytes * c128 / 128.0
                + indexerBytes * c4 / 4.0
                + ratio * c4StateRatio * c4State * c4
                + ratio * c4StateRatio * c4IndexerState * c4;
        lines.add("bytes per full token (DSV4PoolConfigurator._get_bytes_per_full_token): swa_full_tokens_ratio "
                + Format.decimal(ratio) + " x " + kvBytes + " B x " + all + " layers + " + kvBytes + " B x " + c4
                + " c4 layers / 4 + " + kvBytes + " B x " + c128 + " c128 layers / 128 + indexer " + indexerBytes
                + " B x " + c4 + " / 4 + c4 state rings (" + c4Ring + "/" + window + " x "
                + Format.decimal(c4State + c4IndexerState) + " B x " + c4 + " x ratio) = " + Format.decimal(perToken)
                + " B");
        if (speculative) {
            perToken *= (all + 1.0) / all;
            lines.add("x (" + all + " + 1 draft layer) / " + all + " for the speculative draft = "
                    + Format.decimal(perToken) + " B");
        }
        Long requests = Checks.given(flags, f, "--max-running-requests", Flags::number);
        if (requests == null) {
            requests = DSV4_MAX_RUNNING_REQUESTS;
            f.input("--max-running-requests", "256", Source.DEFAULT, "SGLang's DeepSeek-V4 default");
        }
        long fixed = 0;
        if (c128 > 0) {
            long slots = requests + 1;
            long rows = online ? slots + c128Ring + 1 : KvLayers.roundUp(slots * c128Ring + c128Ring + 1, 128);
            long lastDim = (online ? 3L : 2L) * attnHeadDim;
            fixed = rows * lastDim * state * c128;
            lines.add("c128 state, request-scoped (_get_c128_state_fixed_bytes): " + Format.tokens(rows) + " rows x "
                    + lastDim + " x " + state + " B x " + c128 + " layers = " + Format.gib(fixed));
        }
        if (online) {
            f.input(
                    "SGLANG_OPT_USE_ONLINE_COMPRESS",
                    s.env("SGLANG_OPT_USE_ONLINE_COMPRESS"),
                    Source.FLAG,
                    s.at() + ".env");
        }
        long page = pageSize(flags, f, 256);
        return new Pool(perToken, fixed, page);
    }

    private double swaRatio(Flags flags, Facts f, double fallback, String why) {
        Double given = Checks.given(flags, f, "--swa-full-tokens-ratio", Flags::decimal);
        if (given != null) {
            return given;
        }
        f.input("--swa-full-tokens-ratio", Format.decimal(fallback), Source.DEFAULT, why);
        return fallback;
    }

    private long pageSize(Flags flags, Facts f, long fallback) {
        Long given = Checks.given(flags, f, "--page-size", Flags::number);
        if (given != null) {
            return given;
        }
        f.input(
                "--page-size",
                Long.toString(fallback),
                Source.DEFAULT,
                fallback == 1 ? "SGLang's default" : "SGLang's default for this model");
        return fallback;
    }

    private String dtypeName(Flags flags, Facts f, String fallback) {
        Flags.Found d = flags.find("--kv-cache-dtype");
        if (d == null) {
            f.input(
                    "--kv-cache-dtype",
                    fallback,
                    Source.DEFAULT,
                    fallback.equals("auto")
                            ? "SGLang's default: the model's dtype"
                            : "SGLang's default for this model");
            return fallback;
        }
        f.input("--kv-cache-dtype", d.value(), Source.FLAG, flags.where());
        String v = Flags.lower(d.value());
        return v.equals("auto") ? fallback : v;
    }

    /** Memory for the pool per device: what is free after the weights, less total x (1 - mem_fraction_static). */
    private Long available(Flags flags, Facts f, int tp, int pp, List<String> lines) {
        // Looked up even when the fraction is missing, so that the plan lists whatever else is missing too.
        s.memoryPerDevice();
        s.weightsBytes();
        Double fraction = Checks.given(flags, f, "--mem-fraction-static", Flags::decimal);
        if (fraction == null) {
            f.missing(
                    "--mem-fraction-static",
                    "SGLang derives it from the device memory and the TP size when the command does not give it:"
                            + " pass --mem-fraction-static in the command");
            return null;
        }
        return Checks.leftBesideWeights(s, f, MEMORY, fraction, tp * pp, lines);
    }
}
