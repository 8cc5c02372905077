package dev.ctxprobe.testengine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the real llama-server does with its context, in two versions: the current Debian build (b11669) and one of
 * February 2025 (b4748), as recorded in {@code src/test/resources/dev/ctxprobe/engine/llamacpp}. The numbers (the
 * rounded context, the slots, the per-slot context capped at the training context) and the texts they print.
 */
final class LlamaCpp {
    /** KV bytes per token of the imitated model, for the sizes its allocation failure prints. */
    private static final long KV_BYTES_PER_TOKEN = 1024;

    static final String MODEL_FILE = "test-model.gguf";

    private final EngineOptions options;
    private final boolean old;
    /**
     * The whole context: b4748 rounds {@code -c} up to 32; b11669 rounds each slot's share up to 256 whatever -fa is
     * ({@code -c 1064 -np 2} gives two slots of 768).
     */
    final long nCtx;

    /** What one sequence gets of n_ctx, before the cap at n_ctx_train. */
    private final long share;

    final int slots;
    /** b11669: one KV cache for all slots unless any -np was given; b4748 always splits. */
    final boolean unified;
    /** The context of one request: all of n_ctx when unified, else its share, capped at n_ctx_train. */
    final long slotCtx;

    final boolean contextShift;

    LlamaCpp(EngineOptions options) {
        this.options = options;
        this.old = options.old();
        long c = options.maxModelLen();
        this.slots = options.parallel() != null ? options.parallel() : old ? 1 : 4;
        this.unified = !old && (options.kvUnified() != null ? options.kvUnified() : options.parallel() == null);
        if (old) {
            this.nCtx = roundUp(c, 32);
            this.share = nCtx / slots;
        } else if (unified) {
            this.nCtx = roundUp(c, 256);
            this.share = nCtx;
        } else {
            this.share = roundUp(Math.ceilDiv(c, slots), 256);
            this.nCtx = share * slots;
        }
        // b4748 does not cap a slot at the training context (the cap came later): it only warns.
        this.slotCtx = old ? share : Math.min(share, options.trainContext());
        this.contextShift = options.contextShift() != null ? options.contextShift() : old;
    }

    private static long roundUp(long n, long to) {
        return (n + to - 1) / to * to;
    }

    /** True when the KV cache for n_ctx does not fit the memory the test engine was given. */
    boolean kvTooLarge() {
        return nCtx > options.capacity() || options.refuseAt().contains(options.maxModelLen());
    }

    /** What the server prints while it loads the model, before the KV cache is allocated. */
    List<String> loading() {
        List<String> lines = new ArrayList<>();
        if (old) {
            lines.add("llama_model_loader: loaded meta data with 19 key-value pairs and 12 tensors from " + MODEL_FILE);
            lines.add("llama_init_from_model: n_seq_max     = " + slots);
            lines.add("llama_init_from_model: n_ctx         = " + nCtx);
            lines.add("llama_init_from_model: n_ctx_per_seq = " + share);
            if (share > options.trainContext()) {
                lines.add("llama_init_from_model: n_ctx_per_seq (" + share + ") > n_ctx_train ("
                        + options.trainContext() + ") -- possible training context overflow");
            }
        } else {
            lines.add(stamp("I srv  llama_server: initializing ..."));
            lines.add(stamp("I srv    load_model: loading model '" + MODEL_FILE + "'"));
            if (share > options.trainContext()) {
                lines.add(stamp("W llama_context: n_ctx_seq (" + share + ") > n_ctx_train (" + options.trainContext()
                        + ") -- possible training context overflow"));
            }
        }
        return lines;
    }

    /** The allocation failure of a KV cache too large for memory. */
    List<String> kvFailure() {
        long bytes = nCtx * KV_BYTES_PER_TOKEN;
        if (old) {
            return List.of(
                    "ggml_aligned_malloc: insufficient memory (attempted to allocate "
                            + String.format(Locale.ROOT, "%.2f", bytes / 1048576.0) + " MB)",
                    "llama_kv_cache_init: failed to allocate buffer for kv cache",
                    "llama_init_from_model: llama_kv_cache_init() failed for self-attention cache",
                    "common_init_from_params: failed to create context with model '" + MODEL_FILE + "'",
                    "srv    load_model: failed to load model, '" + MODEL_FILE + "'",
                    "main: exiting due to model loading error",
                    "terminate called without an active exception");
        }
        return List.of(
                stamp("E ggml_aligned_malloc: insufficient memory (attempted to allocate "
                        + String.format(Locale.ROOT, "%.2f", bytes / 1048576.0) + " MB)"),
                stamp("E ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size " + bytes),
                stamp("E ggml_backend_buft_alloc_buffer_n_default: failed to allocate CPU buffer of size " + bytes),
                stamp("E llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv"
                        + " cache"),
                stamp("E cmn  common_init_: failed to create context with model '" + MODEL_FILE + "'"),
                stamp("E srv    load_model: failed to create_context with model '" + MODEL_FILE + "'"),
                stamp("I srv    operator(): operator(): cleaning up before exit..."),
                stamp("E srv  llama_server: exiting due to model loading error"));
    }

    /** What the server prints once the model is loaded and it listens. */
    List<String> ready(String url) {
        List<String> lines = new ArrayList<>();
        if (old) {
            for (int i = 0; i < slots; i++) {
                lines.add("slot         init: id  " + i + " | task -1 | new slot n_ctx_slot = " + slotCtx);
            }
            lines.add("main: server is listening on " + url + " - starting the main loop");
            return lines;
        }
        if (share > options.trainContext()) {
            lines.add(stamp("W srv    load_model: the slot context (" + share
                    + ") exceeds the training context of the model (" + options.trainContext() + ") - capping"));
        }
        lines.add(stamp("I srv    load_model: initializing, n_slots = " + slots + ", n_ctx_slot = " + slotCtx
                + ", kv_unified = '" + unified + "'"));
        lines.add(stamp("I srv  llama_server: model loaded"));
        lines.add(stamp("I srv  llama_server: listening on " + url));
        return lines;
    }

    /** What SIGTERM prints: b4748 aborts on every exit after its HTTP thread started (exit 134). */
    List<String> stopping() {
        return old
                ? List.of("terminate called without an active exception")
                : List.of(stamp("I srv    operator(): operator(): cleaning up before exit..."));
    }

    /** The exit code of a stop or of a failed load: b4748's abort, else 0 or 1. */
    int exitCode(int otherwise) {
        return old ? 134 : otherwise;
    }

    /** The refusal of a prompt too long for a slot, as JSON: b11669 names both numbers, b4748 neither. */
    String tooLong(long promptLen) {
        if (old) {
            return "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size. try"
                    + " increasing the context size or enable context shift\",\"type\":\"invalid_request_error\"}}";
        }
        return "{\"error\":{\"code\":400,\"message\":\"request (" + promptLen + " tokens) exceeds the available"
                + " context size (" + slotCtx + " tokens), try increasing it\",\"type\":\"exceed_context_size_error\","
                + "\"n_prompt_tokens\":" + promptLen + ",\"n_ctx\":" + slotCtx + "}}";
    }

    /** b4748 streams its refusal as an SSE field named {@code error}, not {@code data}. */
    boolean refusesInStream() {
        return old;
    }

    /**
     * What context shift keeps of an over-long prompt: the first half of the context is dropped in blocks (n_keep
     * 0), as llama.cpp's server did; 8192 ids to {@code -c 8192} keep 4096.
     */
    long truncated(long promptLen) {
        long block = slotCtx / 2;
        long erased = (promptLen - block) / block * block;
        return promptLen - erased;
    }

    String truncationLine(long kept) {
        return "input truncated, n_ctx = " + slotCtx + ", n_keep = 0, n_left = " + slotCtx + ", n_prompt_tokens = "
                + kept;
    }

    /** The refusal of ids outside the vocabulary (the current build's text). */
    static String invalidTokens() {
        return "{\"error\":{\"code\":400,\"message\":\"Prompt contains invalid tokens\",\"type\":"
                + "\"invalid_request_error\"}}";
    }

    /** {@code GET /props}: the context of each slot and how many there are. */
    String props() {
        return "{\"default_generation_settings\":{\"n_ctx\":" + slotCtx + ",\"params\":{\"n_predict\":-1}},"
                + "\"total_slots\":" + slots + ",\"model_path\":\"" + MODEL_FILE + "\"}";
    }

    /** {@code GET /v1/models}: the model's vocabulary and training context in {@code meta}. */
    String models() {
        return "{\"object\":\"list\",\"data\":[{\"id\":\"" + MODEL_FILE + "\",\"object\":\"model\",\"owned_by\":"
                + "\"llamacpp\",\"meta\":{\"vocab_type\":1,\"n_vocab\":" + options.vocab() + ",\"n_ctx\":" + nCtx
                + ",\"n_ctx_train\":" + options.trainContext() + "}}]}";
    }

    private static final long START = System.nanoTime();

    /** b11669 prefixes each line with minutes, seconds, milliseconds and microseconds since start. */
    private static String stamp(String line) {
        long us = (System.nanoTime() - START) / 1000;
        return String.format(
                        Locale.ROOT,
                        "%d.%02d.%03d.%03d ",
                        us / 60_000_000,
                        us / 1_000_000 % 60,
                        us / 1000 % 1000,
                        us % 1000)
                + line;
    }
}
