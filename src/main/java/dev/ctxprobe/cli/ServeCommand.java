package dev.ctxprobe.cli;

import de.kherud.llama.LlamaBridge;
import dev.ctxprobe.embedded.EmbeddedServer;
import dev.ctxprobe.embedded.GgufInfo;
import dev.ctxprobe.embedded.KvBudget;
import dev.ctxprobe.embedded.LlamaEngine;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.embedded.OpenAiServer;
import dev.ctxprobe.experiment.FileReason;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ctxprobe serve}: the embedded llama.cpp engine behind an OpenAI-compatible HTTP API. */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description =
                "Serve a GGUF model (default: a generated demo model) with llama.cpp over an OpenAI-compatible API.")
public final class ServeCommand implements Callable<Integer> {
    /** The context needs more than --kv-memory; refused before llama.cpp is touched. */
    public static final int KV_BUDGET_EXCEEDED = 3;

    /** llama.cpp could not allocate the context. */
    public static final int ALLOCATION_FAILED = 4;

    private static final int MIN_SLOT_TOKENS = 2;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address to bind (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(
            names = "--port",
            defaultValue = "8000",
            description = "Port to bind, 0 for any free one (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--model",
            paramLabel = "FILE",
            description = "GGUF model file (default: the cached demo model of --shape).")
    Path model;

    @Option(
            names = "--shape",
            defaultValue = "micro",
            description = "Demo model shape: micro or mini (default: ${DEFAULT-VALUE}).")
    String shape;

    @Option(
            names = "--ctx-size",
            defaultValue = "4096",
            paramLabel = "N",
            description = "Context size in tokens, rounded up to a multiple of 32 (default: ${DEFAULT-VALUE}).")
    int ctxSize;

    @Option(
            names = "--parallel",
            defaultValue = "1",
            paramLabel = "N",
            description = "Parallel slots (llama.cpp's n_parallel), each with --ctx-size / N tokens of the context"
                    + " (default: ${DEFAULT-VALUE}).")
    int parallel;

    @Option(
            names = "--kv-memory",
            defaultValue = "1GiB",
            paramLabel = "SIZE",
            description = "KV cache budget, e.g. 8MiB, 6000000, 1GiB (default: ${DEFAULT-VALUE}).")
    String kvMemory;

    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: all processors).")
    Integer threads;

    @Override
    public Integer call() throws Exception {
        EmbeddedServer.Options options;
        try {
            if (ctxSize < 1 || port < 0 || port > 65535 || (threads != null && threads < 1)) {
                throw new IllegalArgumentException("--ctx-size and --threads must be positive, --port within 0..65535");
            }
            checkParallel();
            options = new EmbeddedServer.Options(
                    host,
                    port,
                    model,
                    ModelShape.demo(shape),
                    ctxSize,
                    parallel,
                    KvBudget.parseSize(kvMemory),
                    threads == null ? Runtime.getRuntime().availableProcessors() : threads);
            if (model != null) {
                // Reading the header up front turns a wrong path or a non-GGUF file into a usage error (exit 2).
                GgufInfo.read(model);
            }
        } catch (IllegalArgumentException e) {
            throw usageError(e.getMessage());
        } catch (IOException e) {
            throw usageError("--model: "
                    + (e instanceof GgufInfo.InvalidGgufException
                            ? e.getMessage()
                            : model + " cannot be read (" + FileReason.of(e) + "); give the path of a GGUF file"));
        }
        OpenAiServer server;
        try {
            server = EmbeddedServer.start(options, System.out);
        } catch (EmbeddedServer.KvBudgetExceededException e) {
            System.out.println(EmbeddedServer.PREFIX + e.getMessage());
            return KV_BUDGET_EXCEEDED;
        } catch (LlamaEngine.ContextAllocationException e) {
            System.out.println(EmbeddedServer.PREFIX + "llama.cpp could not allocate the context: " + e.getMessage());
            return ALLOCATION_FAILED;
        } catch (EmbeddedServer.BindFailedException e) {
            throw ExitException.usage(e.getMessage()).byCommand();
        } catch (LlamaBridge.NativeLibraryException e) {
            throw ExitException.failed(e.getMessage()).byCommand();
        } catch (IOException e) {
            throw ExitException.failed("cannot prepare the model (" + FileReason.of(e) + "): " + e.getMessage())
                    .byCommand();
        }
        CountDownLatch stopped = new CountDownLatch(1);
        // On SIGTERM the JVM runs hooks then exits; llama.cpp's native thread would otherwise keep it alive after main.
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            stopped.countDown();
                        },
                        "ctxprobe-serve-shutdown"));
        stopped.await();
        return Main.OK;
    }

    /**
     * Each slot holds {@code n_ctx / N} tokens (docs/engines.md, embedded) and must hold at least a prompt token and
     * the token generated after it.
     */
    private void checkParallel() {
        if (parallel < 1) {
            throw new IllegalArgumentException(
                    "--parallel must be at least 1 (the slots that decode requests together), got " + parallel);
        }
        int ctx = KvBudget.roundCtx(ctxSize);
        if (LlamaEngine.slotContext(ctx, parallel) < MIN_SLOT_TOKENS) {
            throw new IllegalArgumentException(String.format(
                    Locale.ROOT,
                    "--parallel %d splits a context of %,d tokens into slots of %d; each slot needs at least %d"
                            + " tokens (a prompt token and a generated one): give --parallel at most %,d or a larger"
                            + " --ctx-size",
                    parallel,
                    ctx,
                    LlamaEngine.slotContext(ctx, parallel),
                    MIN_SLOT_TOKENS,
                    ctx / MIN_SLOT_TOKENS));
        }
    }

    private static ExitException usageError(String message) {
        return ExitException.usage(message).byCommand().then(ExitException.Help.HINT);
    }
}
