package dev.ctxprobe.embedded;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaBridge;
import de.kherud.llama.LlamaIterator;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * One llama.cpp context with {@code n_parallel} slots, like a llama-server started with {@code -np N}: up to N
 * completions are decoded together in one batch, later requests wait for a free slot. The binding's llama.cpp predates
 * the unified KV cache option ({@code --kv-unified}), so its server gives each slot {@code n_ctx / N} cells and a
 * request must fit its slot (docs/engines.md, embedded).
 */
public final class LlamaEngine {

    /** Where generated text goes, token by token. */
    @FunctionalInterface
    public interface TokenSink {
        void token(String text) throws IOException;
    }

    /** The real counts of one completion. */
    public record Completion(int promptTokens, int completionTokens, String finishReason) {}

    /** llama.cpp could not create the context; {@code cause} is its own log line saying why. */
    public static final class ContextAllocationException extends Exception {
        private static final long serialVersionUID = 1L;

        ContextAllocationException(String cause, Throwable exception) {
            super(cause, exception);
        }
    }

    // Tokens the engine never emits: byte tokens 0x80..0xFF would start or continue multi-byte UTF-8 sequences, which
    // llama.cpp holds back and merges into one event, so events would no longer be one per token; unk/BOS decode to
    // nothing. EOS is banned through ignore_eos, so a completion always runs to max_tokens (counts stay exact).
    private static final List<Integer> BANNED = IntStream.concat(
                    IntStream.of(ByteVocab.UNK, ByteVocab.BOS),
                    IntStream.rangeClosed(ByteVocab.byteToken(0x80), ByteVocab.byteToken(0xFF)))
            .boxed()
            .toList();

    private final LlamaModel model;
    private final int nCtx;
    private final int slots;
    private final boolean byteVocab;
    // Free slot ids, handed out in arrival order: at most n_parallel completions reach llama.cpp at once.
    private final BlockingQueue<Integer> free;
    private final Set<Integer> busy = ConcurrentHashMap.newKeySet();

    private LlamaEngine(LlamaModel model, int nCtx, int slots, boolean byteVocab) {
        this.model = model;
        this.nCtx = nCtx;
        this.slots = slots;
        this.byteVocab = byteVocab;
        this.free = new ArrayBlockingQueue<>(slots, true);
        IntStream.range(0, slots).forEach(free::add);
    }

    /** The context of each slot when {@code ctx} (already rounded) is split into {@code slots}, as llama.cpp does. */
    public static int slotContext(int ctx, int slots) {
        return ctx / slots;
    }

    /**
     * Loads {@code modelFile} with a context of {@code ctx} tokens (already rounded) split into {@code slots}
     * parallel slots, context shift off so that an over-long prompt is an error instead of silent truncation.
     * llama.cpp logs to the process's stdout.
     */
    public static LlamaEngine load(Path modelFile, int ctx, int slots, int threads, boolean byteVocab)
            throws ContextAllocationException, InterruptedException {
        LlamaLog llamaLog = LlamaLog.create();
        ModelParameters params = new ModelParameters()
                .setModel(modelFile.toString())
                .setCtxSize(ctx)
                .setThreads(threads)
                .setThreadsBatch(threads)
                .setParallel(slots)
                .disableContextShift()
                .setLogFile(llamaLog.file().toString());
        try {
            return new LlamaEngine(new LlamaModel(params), ctx, slots, byteVocab);
        } catch (RuntimeException e) {
            if (!LlamaBridge.isLlamaException(e)) {
                throw e;
            }
            String cause = llamaLog.failureCause().orElse(e.getMessage());
            throw new ContextAllocationException(cause, e);
        } finally {
            llamaLog.discard();
        }
    }

    /** The context one request may fill: its slot's share of n_ctx. */
    public int contextSize() {
        return slotContext(nCtx, slots);
    }

    /** n_ctx, the whole context the slots share out. */
    public int totalContext() {
        return nCtx;
    }

    public int slots() {
        return slots;
    }

    /** Whether slot {@code id} (0 to slots - 1) runs a completion now. */
    public boolean isProcessing(int id) {
        return busy.contains(id);
    }

    /** Text to token ids without BOS, as llama-server's {@code /tokenize} does by default. */
    public int[] tokenize(String text) {
        return model.encode(text);
    }

    /**
     * Runs one completion of exactly {@code maxTokens} tokens after the prompt {@code ids} (sent as ids, no BOS), waiting
     * for a free slot. The caller has checked that the prompt and the tokens fit a slot's context.
     */
    public Completion complete(int[] ids, int maxTokens, float temperature, long seed, TokenSink sink)
            throws IOException, InterruptedException {
        InferenceParameters params = new InferenceParameters("")
                .setNPredict(maxTokens)
                .setTemperature(temperature)
                .setSeed((int) seed)
                .setIgnoreEos(true)
                // Every request must pay its full prefill: a benchmark of context length measures it.
                .setCachePrompt(false);
        if (byteVocab) {
            params.disableTokenIds(BANNED);
        }
        LlamaBridge.setPromptIds(params, ids);
        int slot = free.take();
        busy.add(slot);
        try {
            LlamaIterator it = model.generate(params).iterator();
            int tokens = 0;
            try {
                while (it.hasNext()) {
                    LlamaOutput out = it.next();
                    if (it.hasNext() || !out.text.isEmpty()) {
                        tokens++;
                        sink.token(out.text);
                    }
                }
            } catch (IOException | RuntimeException e) {
                if (it.hasNext()) {
                    it.cancel();
                }
                throw e;
            }
            return new Completion(ids.length, tokens, tokens < maxTokens ? "stop" : "length");
        } finally {
            busy.remove(slot);
            free.add(slot);
        }
    }
}
