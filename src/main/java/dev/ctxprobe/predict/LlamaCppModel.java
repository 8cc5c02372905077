package dev.ctxprobe.predict;

import dev.ctxprobe.embedded.GgufInfo;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.hardware.CommandResult;
import dev.ctxprobe.hardware.ProcessCommandRunner;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    /** GGML_PAD(n_ctx, 256) from {@link Rule#PAD_256}; older builds pad to 32, 256 with flash attention. */
    static final long CTX_PADDING = 256;

    private static final long OLDER_PADDING = 32;

    /**
     * b4748 (February 2025), the older build whose behaviour ctxprobe recorded (docs/engines.md): every {@link Rule}
     * starts after it.
     */
    public static final long OLDER_BUILD = 4748;

    /** The current build ctxprobe's rules and recordings come from. */
    static final long CURRENT_BUILD = 11669;

    /**
     * llama.cpp's sizing rules that changed, each with the first build that has it, read from llama.cpp's history
     * (docs/engines.md#which-build-has-which-rule): a build below a rule's first build follows the older behaviour. A
     * first build that could not be established is the earliest the evidence allows (the first build after
     * {@link #OLDER_BUILD} where there is none), and the plan says it is assumed.
     */
    enum Rule {
        /** cd5e3b575, the head of b6925: older builds only warn "possible training context overflow". */
        TRAINING_CAP(
                6925,
                "PR #16736",
                true,
                "a slot is capped at the training context",
                "a slot is not capped at the training context"),
        /** The same commit: without -np, 4 slots share one unified KV cache; older builds start one slot. */
        AUTO_UNIFIED_SLOTS(
                6925,
                "PR #16736",
                true,
                "-np defaults to 4 slots sharing a unified KV cache",
                "-np defaults to one slot"),
        /**
         * Merged after b6925 (its review ran in November 2025, after PR #16736): the exact first build is not
         * established, b6926 is the earliest it can be.
         */
        PAD_256(
                6926,
                "PR #17046",
                false,
                "n_ctx is padded to 256 (each slot's too)",
                "n_ctx is padded to 32 without flash attention (256 with), slots get n_ctx / np"),
        /** Still 4096 in September 2025; the change (likely with -fit, PR #16653) is not pinned to a build. */
        DEFAULT_CTX_0(
                OLDER_BUILD + 1,
                "likely PR #16653",
                false,
                "-c defaults to 0, the training context",
                "-c defaults to 4096"),
        /**
         * The split KV cache of July 2025 added --kv-unified; its first build is not established, but b4916 (the
         * llama.cpp of ctxprobe's binding, docs/engines.md#embedded) has no kv_unified yet: b4917 is the earliest.
         */
        KV_UNIFIED_FLAG(
                4917,
                "PR #14363",
                false,
                "--kv-unified and --no-kv-unified exist",
                "there is no --kv-unified or --no-kv-unified");

        final long firstBuild;
        final String change;
        final boolean established;
        final String current;
        final String older;

        Rule(long firstBuild, String change, boolean established, String current, String older) {
            this.firstBuild = firstBuild;
            this.change = change;
            this.established = established;
            this.current = current;
            this.older = older;
        }

        /** Whether {@code build} has this rule; an unknown build (null) is taken to be current. */
        boolean holds(Long build) {
            return build == null || build >= firstBuild;
        }
    }

    /** The last build without {@code --kv-unified} (assumed where {@link Rule#KV_UNIFIED_FLAG} is not established). */
    public static final long LAST_BUILD_WITHOUT_KV_UNIFIED = Rule.KV_UNIFIED_FLAG.firstBuild - 1;

    /** How long {@code llama-server --version} may take: it prints and exits without loading a model. */
    private static final Duration VERSION_LIMIT = Duration.ofSeconds(5);

    private static final Pattern VERSION_BUILD = Pattern.compile("build (\\d{1,7})|version: (\\d{1,7}) \\(");

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

    private String versionOf;
    private Long build;
    private Path loadedFile;
    private GgufInfo gguf;
    private String ggufProblem;

    LlamaCppModel(BackendSetup setup) {
        super(setup);
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        Map<String, Object> meta = metadata(flags, f);
        if (meta == null && ggufProblem != null && Files.exists(loadedFile)) {
            // A file that is there but is no whole GGUF header (cut short, or not a GGUF) is one llama.cpp cannot
            // load: nothing is served at any length, whatever -c says.
            checks.add(new Check(
                    Bound.ENGINE_REFUSES,
                    false,
                    "-m " + loadedFile + " is not a GGUF llama.cpp can load (" + ggufProblem
                            + "): the server fails with 'failed to load model'"));
            return null;
        }
        String arch = meta == null ? null : String.valueOf(meta.get("general.architecture"));
        Long nCtxTrain = meta == null ? null : number(meta, arch + ".context_length");
        if (nCtxTrain != null) {
            f.input("n_ctx_train", Format.tokens(nCtxTrain), Source.FILE, arch + ".context_length");
        }

        Long build = build(flags, f);
        Flags.Found c = flags.find("-c", "--ctx-size");
        Long requested;
        String relation;
        if (c == null && !Rule.DEFAULT_CTX_0.holds(build)) {
            requested = 4096L;
            relation = "b" + build + "'s default -c 4096";
            f.input("-c", "4096", Source.DEFAULT, "the default of builds before b" + Rule.DEFAULT_CTX_0.firstBuild);
        } else if (c == null) {
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
        boolean pad256 = Rule.PAD_256.holds(build);
        long padding = !pad256 && !flashAttention(flags) ? OLDER_PADDING : CTX_PADDING;
        long nCtx = KvLayers.roundUp(asked, padding);

        Flags.Found np = flags.find("-np", "--parallel");
        Long slotsGiven = np == null ? null : Flags.number(np.value());
        boolean autoRule = Rule.AUTO_UNIFIED_SLOTS.holds(build);
        boolean autoSlots = autoRule && (slotsGiven == null || slotsGiven < 0);
        int slots = autoSlots || slotsGiven == null
                ? (autoRule ? AUTO_SLOTS : 1)
                : Math.max(1, Math.toIntExact(slotsGiven));
        if (np != null) {
            f.input(np.name(), np.value(), Source.FLAG, flags.where());
        } else if (!autoRule) {
            f.input("-np", "1", Source.DEFAULT, "the default of builds before b" + Rule.AUTO_UNIFIED_SLOTS.firstBuild);
        } else {
            f.input("-np", "-1", Source.DEFAULT, "llama-server's default: 4 slots with a unified KV cache");
        }
        Boolean kvFlag = flags.toggle(List.of("--kv-unified", "-kvu"), List.of("--no-kv-unified", "-no-kvu"));
        boolean unified = kvFlag != null ? kvFlag : autoSlots;
        if (kvFlag != null) {
            String given = kvFlag ? "--kv-unified" : "--no-kv-unified";
            f.input(given, "set", Source.FLAG, flags.where());
            if (!Rule.KV_UNIFIED_FLAG.holds(build)) {
                checks.add(new Check(
                        Bound.ENGINE_REFUSES,
                        false,
                        "b" + build + " has no " + given + " (it came with llama.cpp's split KV cache, "
                                + Rule.KV_UNIFIED_FLAG.change + "): the server fails with 'invalid argument'"));
            }
        } else {
            f.input(
                    "kv_unified",
                    Boolean.toString(unified),
                    Source.DEFAULT,
                    autoSlots ? "unified with the automatic -np" : "not unified when -np is given");
        }

        long nCtxSeq = nCtx;
        String ctxLine = "n_ctx = " + Format.tokens(asked) + " (" + relation + ") padded to " + padding + " = "
                + Format.tokens(nCtx);
        if (!unified && !pad256) {
            nCtxSeq = nCtx / slots;
            ctxLine += "; " + slots + " slot" + (slots == 1 ? "" : "s") + ": n_ctx_per_seq = " + Format.tokens(nCtxSeq)
                    + " each (n_ctx / np)";
        } else if (!unified) {
            nCtxSeq = KvLayers.roundUp(nCtx / slots, CTX_PADDING);
            nCtx = nCtxSeq * slots;
            ctxLine += "; " + slots + " slot" + (slots == 1 ? "" : "s") + " without a unified KV cache: n_ctx_seq = "
                    + Format.tokens(nCtxSeq) + " each (n_ctx / np padded to " + CTX_PADDING + "), n_ctx "
                    + Format.tokens(nCtx);
        }
        details.add(ctxLine);
        long slot = nCtxSeq;
        // Builds before the cap only warn "possible training context overflow" and serve past it.
        Long cap =
                nCtxTrain == null || !Rule.TRAINING_CAP.holds(build) ? null : slotCap(meta, arch, nCtxTrain, flags, f);
        boolean trainCapped = cap != null && nCtxSeq > cap;
        if (trainCapped) {
            slot = cap;
            details.add("slot context " + Format.tokens(nCtxSeq) + " capped at "
                    + (cap.equals(nCtxTrain)
                            ? "the training context " + Format.tokens(nCtxTrain)
                            : Format.tokens(cap) + " (the training context " + Format.tokens(nCtxTrain)
                                    + " scaled by YaRN)"));
        }
        Bound bound;
        if (c == null && !Rule.DEFAULT_CTX_0.holds(build)) {
            bound = Bound.CONTEXT_FLAG;
        } else if (trainCapped || requested == 0) {
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

        flashAttentionForV(flags, f, checks);
        // Requests at once: one per slot; a unified cache is one pool of n_ctx cells, a split one gives each slot its
        // own (docs/plan.md#the-capacity-map).
        f.holds(new SurfacePrediction.Holds(unified ? nCtx : null, slots, unified ? null : slot, null, null));
        return kvMemory(meta, arch, flags, f, nCtx, checks, details);
    }

    /**
     * The build of the llama-server the command runs, from its {@code --version} (which loads no model), read once;
     * null where the program is not llama-server or does not say. The plan says which rules it assumed.
     */
    private Long build(Flags flags, Facts f) {
        String program = flags.program();
        if (!program.equals(versionOf)) {
            versionOf = program;
            build = null;
            if (Path.of(program).getFileName().toString().contains("llama-server")) {
                CommandResult r = new ProcessCommandRunner(VERSION_LIMIT, 4096).run(List.of(program, "--version"));
                Matcher m = VERSION_BUILD.matcher(r.stdout() + "\n" + r.stderr());
                if (r.problem() == null && m.find()) {
                    build = Long.parseLong(m.group(1) != null ? m.group(1) : m.group(2));
                }
            }
        }
        if (build == null) {
            f.assume("the llama.cpp build is not known (" + program + " --version gave none): the rules of current"
                    + " builds (b" + CURRENT_BUILD + ") are assumed: " + describe(List.of(Rule.values()), null));
            return null;
        }
        f.input("llama.cpp build", "b" + build, Source.DETECTED, program + " --version");
        List<Rule> older =
                Arrays.stream(Rule.values()).filter(r -> !r.holds(build)).toList();
        if (!older.isEmpty()) {
            f.assume("b" + build + " predates " + older.size() + " of llama.cpp's rule changes and follows the older"
                    + " rules: " + describe(older, build));
        }
        List<Rule> unsure = Arrays.stream(Rule.values())
                .filter(r -> !r.established && r.holds(build) && build < CURRENT_BUILD)
                .toList();
        if (!unsure.isEmpty()) {
            f.assume("the first build of " + unsure.size() + " rule change" + (unsure.size() == 1 ? " is" : "s are")
                    + " not established, so b" + build + " is assumed to have "
                    + (unsure.size() == 1 ? "it" : "them") + ": " + describe(unsure, null));
        }
        return build;
    }

    /**
     * The rules, each with its change and first build: their current form where {@code build} is null, else the
     * older form {@code build} follows.
     */
    private static String describe(List<Rule> rules, Long build) {
        return String.join(
                "; ",
                rules.stream()
                        .map(r -> (build == null ? r.current : r.older) + " (" + (build == null ? "from" : "before")
                                + " b" + r.firstBuild + ", " + r.change + (r.established ? "" : ", first build assumed")
                                + ")")
                        .toList());
    }

    /** Flash attention asked for: {@code -fa on}, or a bare {@code -fa} (older builds take no value). */
    private static boolean flashAttention(Flags flags) {
        Flags.Found fa = flags.find("-fa", "--flash-attn");
        if (fa == null || fa.value().startsWith("-")) {
            return flags.toggle(List.of("-fa", "--flash-attn"), List.of()) != null;
        }
        return List.of("on", "1", "true", "enabled").contains(Flags.lower(fa.value()));
    }

    /**
     * The context a slot is capped at: the training context, or under YaRN scaling the original context times the
     * rope scale (b11669 measured: a model trained at 8,192 with {@code --rope-scaling yarn --rope-scale 2} is capped
     * at 16,384, with {@code --yarn-orig-ctx 4096 --rope-scale 4} also at 16,384; linear scaling does not raise it).
     */
    private static long slotCap(Map<String, Object> meta, String arch, long nCtxTrain, Flags flags, Facts f) {
        Flags.Found typeFlag = flags.find("--rope-scaling");
        String type = typeFlag != null ? Flags.lower(typeFlag.value()) : text(meta, arch + ".rope.scaling.type");
        if (!"yarn".equals(type)) {
            return nCtxTrain;
        }
        Double scale = null;
        Flags.Found scaleFlag = flags.find("--rope-scale");
        Flags.Found freqFlag = flags.find("--rope-freq-scale");
        if (scaleFlag != null) {
            scale = decimal(scaleFlag.value());
        } else if (freqFlag != null) {
            Double freq = decimal(freqFlag.value());
            scale = freq == null || freq <= 0 ? null : 1 / freq;
        } else if (meta.get(arch + ".rope.scaling.factor") instanceof Number n) {
            scale = n.doubleValue();
        }
        if (scale == null || scale <= 1) {
            return nCtxTrain;
        }
        Flags.Found origFlag = flags.find("--yarn-orig-ctx");
        Long orig = origFlag == null ? null : Flags.number(origFlag.value());
        if (orig == null || orig <= 0) {
            Long fromFile = number(meta, arch + ".rope.scaling.original_context_length");
            orig = fromFile == null ? nCtxTrain : fromFile;
        }
        long cap = (long) (orig * scale);
        f.input(
                "YaRN cap",
                Format.tokens(cap),
                Source.FLAG,
                "original context " + Format.tokens(orig) + " x rope scale " + scale);
        return cap;
    }

    private static String text(Map<String, Object> meta, String key) {
        return meta.get(key) instanceof String t ? Flags.lower(t) : null;
    }

    private static Double decimal(String text) {
        try {
            return Double.valueOf(text.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Without flash attention llama.cpp stores the V cache transposed, which a quantized type cannot be: the context
     * is never created, at any length (docs/engines.md, llamacpp). Without {@code -fa} the build's default decides
     * (auto in current builds, which turns it on where the backend supports it; off in older ones).
     */
    private static void flashAttentionForV(Flags flags, Facts f, List<Check> checks) {
        Flags.Found v = flags.find("-ctv", "--cache-type-v");
        if (v == null || !quantized(Flags.lower(v.value()))) {
            return;
        }
        Flags.Found fa = flags.find("-fa", "--flash-attn");
        if (fa == null || fa.value().startsWith("-")) {
            if (flags.toggle(List.of("-fa", "--flash-attn"), List.of()) == null) {
                f.assume(v.name() + " " + v.value() + " needs flash attention; without -fa the build's default is"
                        + " assumed to turn it on (auto in current builds; older builds default to off and refuse)");
            }
            return;
        }
        String value = Flags.lower(fa.value());
        if (List.of("off", "0", "false", "disabled").contains(value)) {
            checks.add(new Check(
                    Bound.ENGINE_REFUSES,
                    false,
                    v.name() + " " + v.value() + " with " + fa.name() + " " + fa.value() + ": llama.cpp refuses a"
                            + " quantized V cache without flash attention; pass -fa on, or keep -ctv f16"));
        }
    }

    private static boolean quantized(String cacheType) {
        return cacheType.startsWith("q") || cacheType.startsWith("iq");
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
        details.add("KV cache: " + layers + (layers == 1 ? " layer" : " layers") + " x (n_embd_k_gqa " + embdK + " x "
                + typeK + " + n_embd_v_gqa "
                + embdV + " x " + typeV + ") = " + Format.bytes(perToken) + " per cell; x n_ctx " + Format.tokens(nCtx)
                + " = " + Format.gib(bytes));
        // A CPU build (or -ngl 0) keeps the KV cache in host memory: that is its bound, not an accelerator's.
        Flags.Found ngl = flags.find("-ngl", "--gpu-layers", "--n-gpu-layers");
        Long host = s.hostMemoryForCpu(ngl != null && Long.valueOf(0).equals(Flags.number(ngl.value())));
        long total;
        if (host != null) {
            total = host;
        } else {
            Long memory = s.memoryPerDevice();
            if (memory == null) {
                return null;
            }
            Integer devices = s.devices();
            total = memory * (devices == null ? 1 : devices);
        }
        long weights = loadedFile == null ? 0 : size(loadedFile);
        long available = total - weights;
        details.add((host != null ? "host memory: " : "memory: ") + Format.gib(total) + " - the GGUF's "
                + Format.gib(weights) + " = " + Format.gib(available));
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
