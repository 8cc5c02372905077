package dev.ctxprobe.embedded;

import de.kherud.llama.LlamaBridge;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.SocketException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * {@code ctxprobe serve}: checks the KV budget, binds the port (503 while loading), loads llama.cpp and serves until
 * the process ends. Prints the stable lines engine profiles match, each prefixed {@value #PREFIX}.
 */
public final class EmbeddedServer {
    public static final String PREFIX = "ctxprobe-serve: ";

    /**
     * What to serve; {@code model} null means the cached demo model of {@code shape}; {@code parallel} slots share
     * out the context.
     */
    public record Options(
            String host,
            int port,
            Path model,
            ModelShape shape,
            int ctxSize,
            int parallel,
            long kvBudgetBytes,
            int threads) {}

    /** The context does not fit the KV budget; the message is the stable refusal line. */
    public static final class KvBudgetExceededException extends Exception {
        private static final long serialVersionUID = 1L;

        KvBudgetExceededException(String line) {
            super(line);
        }
    }

    /** The port cannot be bound; the message says which and why, in one sentence. */
    public static final class BindFailedException extends Exception {
        private static final long serialVersionUID = 1L;

        BindFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private EmbeddedServer() {}

    /**
     * Prepares and starts serving; returns the running server once ready. Throws before touching llama.cpp when the
     * budget is exceeded, and with llama.cpp's own cause when it cannot allocate the context.
     */
    public static OpenAiServer start(Options o, PrintStream out)
            throws IOException, InterruptedException, KvBudgetExceededException, LlamaEngine.ContextAllocationException,
                    BindFailedException, LlamaBridge.NativeLibraryException {
        boolean demo = o.model() == null;
        Path modelFile = demo ? DemoModel.ensure(o.shape()) : o.model();
        ModelShape shape = demo ? o.shape() : GgufInfo.read(modelFile).shape(modelName(modelFile));
        int ctx = KvBudget.roundCtx(o.ctxSize());
        KvBudget budget = KvBudget.of(o.kvBudgetBytes(), shape);
        out.println(PREFIX + budget.capacityLine(ctx));
        if (!budget.holds(ctx)) {
            throw new KvBudgetExceededException(budget.refusalLine(ctx));
        }
        out.println(PREFIX + slotsLine(ctx, o.parallel()));
        String modelId = demo ? "ctxprobe-" + shape.name() : shape.name();
        // Before binding: a library that does not load must end the process, not leave a server at 503 forever.
        LlamaBridge.loadNativeLibrary();
        OpenAiServer server = bind(o, modelId, shape);
        try {
            server.attach(LlamaEngine.load(modelFile, ctx, o.parallel(), o.threads(), demo));
        } catch (LlamaEngine.ContextAllocationException | RuntimeException | Error e) {
            // The HTTP server's thread is not a daemon: left open, it would keep a failed process alive.
            server.close();
            throw e;
        }
        out.println(PREFIX + "ready on http://" + o.host() + ":" + server.port() + " (ctx-size " + ctx + ", model "
                + modelFile + ")");
        return server;
    }

    /**
     * The slots and each one's context in llama-server's own words (current builds: {@code initializing, n_slots = 4,
     * n_ctx_slot = 8192, kv_unified = 'true'}), which engine profiles read as llama-server's. The binding's llama.cpp
     * always splits: {@code kv_unified} is {@code 'false'}, even for one slot that holds the whole context.
     */
    static String slotsLine(int ctx, int parallel) {
        return "initializing, n_slots = " + parallel + ", n_ctx_slot = " + LlamaEngine.slotContext(ctx, parallel)
                + ", kv_unified = 'false'";
    }

    private static OpenAiServer bind(Options o, String modelId, ModelShape shape)
            throws IOException, BindFailedException {
        try {
            return OpenAiServer.start(o.host(), o.port(), modelId, shape);
        } catch (BindException e) {
            throw new BindFailedException(
                    String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT).contains("already in use")
                            ? "port " + o.port() + " on " + o.host() + " is already in use; stop the process holding"
                                    + " it or choose another with --port (0 picks a free one)"
                            : "cannot listen on " + o.host() + ":" + o.port() + " (" + e.getMessage() + "); give an"
                                    + " address of this machine with --host, e.g. 127.0.0.1 or 0.0.0.0",
                    e);
        } catch (SocketException | IllegalArgumentException e) {
            // An unknown host name arrives unresolved and fails here.
            throw new BindFailedException(
                    "cannot listen on " + o.host() + ":" + o.port() + " (" + e.getMessage() + "); give an address of"
                            + " this machine with --host, e.g. 127.0.0.1 or 0.0.0.0",
                    e);
        }
    }

    private static String modelName(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }
}
