package dev.ctxprobe.predict;

import dev.ctxprobe.embedded.GgufInfo;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * llama-server's rules for one target, from the GGUF header and the command: n_ctx padded to 256 (the
 * {@code llama_context} constructor, src/llama-context.cpp), each slot {@code n_ctx / np} without a unified KV cache,
 * a slot never above the training context ({@code server_context::load_model}, tools/server/server-context.cpp caps
 * it with "the slot context ... exceeds the training context of the model - capping"), and a prompt refused when
 * {@code n_tokens >= slot n_ctx} (exceed_context_size_error).
 */
public final class LlamaCppModel extends EngineModel {
    /** llama.cpp's sizing, with {@code profile}'s prompt rule. */
    public static Sizing sizing(EngineProfile profile) {
        return new Sizing(profile, LlamaCppModel::new);
    }

    /** GGML_PAD(n_ctx, 256) in builds since PR #17046; older builds (b4748) pad to 32, 256 with flash attention. */
    static final long CTX_PADDING = 256;

    /** llama-server's -np default: -1, meaning 4 slots sharing one unified KV cache (tools/server/server.cpp). */
    private static final int AUTO_SLOTS = 4;

    /** ggml type traits: bytes per block and elements per block of the KV cache types llama.cpp accepts. */
    private static final Map<String, long[]> CACHE_TYPES = Map.of(
            "f32", new long[] {4, 1},
            "f16", new long[] {2, 1},
            "bf16", new long[] {2, 1},
            "q8_0", new long[] {34, 32},
            "q4_0", new long[] {18, 32},
            "q4_1", new long[] {20, 32},
            "iq4_nl", new long[] {18, 32},
            "q5_0", new long[] {22, 32},
            "q5_1", new long[] {24, 32});

    private Path loadedFile;
    private GgufInfo gguf;
    private String ggufProblem;

    LlamaCppModel(BackendSetup setup) {
        super(setup);
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        Map<String, Object> meta = metadata(flags, f);
        String arch = meta == null ? null : String.valueOf(meta.get("general.architecture"));
        Long nCtxTrain = meta == null ? null : number(meta, arch + ".context_length");
        if (nCtxTrain != null) {
            f.input("n_ctx_train", Format.tokens(nCtxTrain), Source.FILE, arch + ".context_length");
        }

        Flags.Found c = flags.find("-c", "--ctx-size");
        Long requested;
        String relation;
        if (c == null) {
            requested = 0L;
            relation = "llama-server's default -c 0";
            f.input("-c", "0", Source.DEFAULT, "llama-server's default: the training context (4096 in older builds)");
            f.assume("without -c, -fit on (llama-server's default) may lower the context to fit the device");
        } else {
            requested = Flags.number(c.value());
            relation = requested == null ? "unreadable" : s.relation(target, requested, s.follows("-c", "--ctx-size"));
            f.input(c.name(), c.value(), Source.FLAG, flags.where());
        }
        if (requested == null || requested < 0 || (requested == 0 && nCtxTrain == null)) {
            f.missing("n_ctx", "-c is not a number of tokens, or it is 0 and the GGUF's context_length is not known");
            return null;
        }
        long asked = requested == 0 ? nCtxTrain : requested;
        long nCtx = KvLayers.roundUp(asked, CTX_PADDING);

        Flags.Found np = flags.find("-np", "--parallel");
        Long slotsGiven = np == null ? null : Flags.number(np.value());
        boolean autoSlots = slotsGiven == null || slotsGiven < 0;
        int slots = autoSlots ? AUTO_SLOTS : Math.max(1, Math.toIntExact(slotsGiven));
        if (np != null) {
            f.input(np.name(), np.value(), Source.FLAG, flags.where());
        } else {
            f.input("-np", "-1", Source.DEFAULT, "llama-server's default: 4 slots with a unified KV cache");
        }
        Boolean kvFlag = flags.toggle(List.of("--kv-unified", "-kvu"), List.of("--no-kv-unified", "-no-kvu"));
        boolean unified = kvFlag != null ? kvFlag : autoSlots;
        if (kvFlag != null) {
            f.input(kvFlag ? "--kv-unified" : "--no-kv-unified", "set", Source.FLAG, flags.where());
        } else {
            f.input(
                    "kv_unified",
                    Boolean.toString(unified),
                    Source.DEFAULT,
                    autoSlots ? "unified with the automatic -np" : "not unified when -np is given");
        }

        long nCtxSeq = nCtx;
        String ctxLine = "n_ctx = " + Format.tokens(asked) + " (" + relation + ") padded to " + CTX_PADDING + " = "
                + Format.tokens(nCtx);
        if (!unified) {
            nCtxSeq = KvLayers.roundUp(nCtx / slots, CTX_PADDING);
            nCtx = nCtxSeq * slots;
            ctxLine += "; " + slots + " slots without a unified KV cache: n_ctx_seq = " + Format.tokens(nCtxSeq)
                    + " each (n_ctx / np padded to " + CTX_PADDING + "), n_ctx " + Format.tokens(nCtx);
        }
        details.add(ctxLine);
        long slot = nCtxSeq;
        boolean trainCapped = nCtxTrain != null && nCtxSeq > nCtxTrain;
        if (trainCapped) {
            slot = nCtxTrain;
            details.add("slot context " + Format.tokens(nCtxSeq) + " capped at the training context "
                    + Format.tokens(nCtxTrain));
        }
        Bound bound;
        if (trainCapped || requested == 0) {
            bound = Bound.MODEL_CONFIG;
        } else if (!unified && slots > 1) {
            bound = Bound.ENGINE_SLOTS;
        } else {
            bound = BackendSetup.promptBound(s.follows("-c", "--ctx-size"));
        }
        boolean promptOk = target <= slot - 1;
        checks.add(new Check(
                bound,
                promptOk,
                "prompt " + Format.tokens(target) + (promptOk ? " < " : " >= ") + "the slot's n_ctx "
                        + Format.tokens(slot)
                        + (promptOk ? "" : ": the request is refused (exceed_context_size_error)")));

        KvFit fit = kvMemory(meta, arch, flags, f, nCtx, checks, details);
        return fit;
    }

    /** The KV cache bytes of the whole context, and a memory check when the machine's memory is known. */
    private KvFit kvMemory(
            Map<String, Object> meta,
            String arch,
            Flags flags,
            Facts f,
            long nCtx,
            List<Check> checks,
            List<String> details) {
        if (meta == null) {
            return null;
        }
        Long layers = number(meta, arch + ".block_count");
        Long heads = number(meta, arch + ".attention.head_count");
        Long kvHeads = number(meta, arch + ".attention.head_count_kv");
        Long width = number(meta, arch + ".embedding_length");
        if (layers == null || heads == null || width == null || heads == 0) {
            f.assume("the GGUF does not give block_count, head_count and embedding_length: KV memory not sized");
            return null;
        }
        if (meta.containsKey(arch + ".attention.sliding_window")
                || meta.containsKey(arch + ".attention.kv_lora_rank")) {
            f.assume("sliding-window and MLA caches are not sized for llama.cpp: KV memory not sized");
            return null;
        }
        long kv = kvHeads == null ? heads : kvHeads;
        Long keyLength = number(meta, arch + ".attention.key_length");
        Long valueLength = number(meta, arch + ".attention.value_length");
        long embdK = (keyLength == null ? width / heads : keyLength) * kv;
        long embdV = (valueLength == null ? width / heads : valueLength) * kv;
        String typeK = cacheType(flags, f, "-ctk", "--cache-type-k");
        String typeV = cacheType(flags, f, "-ctv", "--cache-type-v");
        long[] k = CACHE_TYPES.get(typeK);
        long[] v = CACHE_TYPES.get(typeV);
        if (k == null || v == null) {
            f.assume("KV cache type " + (k == null ? typeK : typeV) + " is not sized here: KV memory not sized");
            return null;
        }
        // llama_kv_cache: per layer a K row of n_embd_k_gqa and a V row of n_embd_v_gqa elements per cell.
        long rowK = embdK / k[1] * k[0];
        long rowV = embdV / v[1] * v[0];
        long perToken = layers * (rowK + rowV);
        long bytes = perToken * nCtx;
        details.add("KV cache: " + layers + " layers x (n_embd_k_gqa " + embdK + " x " + typeK + " + n_embd_v_gqa "
                + embdV + " x " + typeV + ") = " + Format.bytes(perToken) + " per cell; x n_ctx " + Format.tokens(nCtx)
                + " = " + Format.gib(bytes));
        Long memory = s.memoryPerDevice();
        if (memory == null) {
            return null;
        }
        Integer devices = s.devices();
        long total = memory * (devices == null ? 1 : devices);
        long weights = loadedFile == null ? 0 : size(loadedFile);
        long available = total - weights;
        details.add("memory: " + Format.gib(total) + " - the GGUF's " + Format.gib(weights) + " = "
                + Format.gib(available));
        f.assume("llama.cpp's compute buffers, which grow with the batch size, are not counted: a KV-memory bound"
                + " is an upper bound");
        long capacity = perToken == 0 ? 0 : available / perToken;
        boolean ok = bytes <= available;
        checks.add(new Check(
                Bound.KV_MEMORY,
                ok,
                "KV cache " + Format.gib(bytes) + (ok ? " <= " : " > ") + Format.gib(available)
                        + " left beside the weights" + (ok ? "" : ": failed to allocate buffer for kv cache")));
        return new KvFit(nCtx, bytes, available, perToken, 0, capacity);
    }

    private static String cacheType(Flags flags, Facts f, String... names) {
        Flags.Found t = flags.find(names);
        if (t == null) {
            f.input(names[0], "f16", Source.DEFAULT, "llama.cpp's default KV cache type");
            return "f16";
        }
        f.input(t.name(), t.value(), Source.FLAG, flags.where());
        return Flags.lower(t.value());
    }

    /** The GGUF metadata of {@code -m FILE}, read once; null (recorded as missing) when there is none. */
    private Map<String, Object> metadata(Flags flags, Facts f) {
        Flags.Found m = flags.find("-m", "--model");
        if (m == null) {
            Flags.Found hf = flags.find("-hf", "-hfr", "--hf-repo");
            f.missing(
                    "GGUF model",
                    hf == null
                            ? "the command gives no -m FILE"
                            : "the model comes from " + hf.name() + " " + hf.value()
                                    + ": give -m FILE for a prediction");
            return null;
        }
        Path file = Path.of(m.value());
        if (!file.equals(loadedFile)) {
            loadedFile = file;
            gguf = null;
            ggufProblem = null;
            try {
                gguf = GgufInfo.read(file);
            } catch (IOException e) {
                ggufProblem = Files.exists(file) ? e.getMessage() : "no such file";
            }
        }
        if (gguf == null) {
            f.missing("GGUF model", file + " (" + m.name() + " in " + flags.where() + "): " + ggufProblem);
            return null;
        }
        f.input("GGUF model", file.toString(), Source.FLAG, flags.where());
        return gguf.metadata();
    }

    private static Long number(Map<String, Object> meta, String key) {
        return meta.get(key) instanceof Number n ? n.longValue() : null;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }
}
