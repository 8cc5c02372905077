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
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.IntStream;

/**
 * One llama.cpp context with one slot: completions run one at a time, later requests wait their turn, like a
 * llama-server started with {@code -np 1}.
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
    private final boolean byteVocab;
    private final ReentrantLock slot = new ReentrantLock(true);

    private LlamaEngine(LlamaModel model, int nCtx, boolean byteVocab) {
        this.model = model;
        this.nCtx = nCtx;
        this.byteVocab = byteVocab;
    }

    /**
     * Loads {@code modelFile} with a context of {@code ctx} tokens (already rounded), context shift off so that an
     * over-long prompt is an error instead of silent truncation. llama.cpp logs to the process's stdout.
     */
    public static LlamaEngine load(Path modelFile, int ctx, int threads, boolean byteVocab)
            throws ContextAllocationException, InterruptedException {
        LlamaLog llamaLog = LlamaLog.create();
        ModelParameters params = new ModelParameters()
                .setModel(modelFile.toString())
                .setCtxSize(ctx)
                .setThreads(threads)
                .setThreadsBatch(threads)
                .setParallel(1)
                .disableContextShift()
                .setLogFile(llamaLog.file().toString());
        try {
            return new LlamaEngine(new LlamaModel(params), ctx, byteVocab);
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

    public int contextSize() {
        return nCtx;
    }

    /** Text to token ids without BOS, as llama-server's {@code /tokenize} does by default. */
    public int[] tokenize(String text) {
        return model.encode(text);
    }

    /**
     * Runs one completion of exactly {@code maxTokens} tokens after the prompt {@code ids} (sent as ids, no BOS), waiting
     * for the slot. The caller has checked that the prompt and the tokens fit the context.
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
        slot.lockInterruptibly();
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
            slot.unlock();
        }
    }
}
