package dev.ctxprobe.embedded;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * {@code ctxprobe serve}: checks the KV budget, binds the port (503 while loading), loads llama.cpp and serves until
 * the process ends. Prints the stable lines engine profiles match, each prefixed {@value #PREFIX}.
 */
public final class EmbeddedServer {
    public static final String PREFIX = "ctxprobe-serve: ";

    /** What to serve; {@code model} null means the cached demo model of {@code shape}. */
    public record Options(
            String host, int port, Path model, ModelShape shape, int ctxSize, long kvBudgetBytes, int threads) {}

    /** The context does not fit the KV budget; the message is the stable refusal line. */
    public static final class KvBudgetExceededException extends Exception {
        private static final long serialVersionUID = 1L;

        KvBudgetExceededException(String line) {
            super(line);
        }
    }

    private EmbeddedServer() {}

    /**
     * Prepares and starts serving; returns the running server once ready. Throws before touching llama.cpp when the
     * budget is exceeded, and with llama.cpp's own cause when it cannot allocate the context.
     */
    public static OpenAiServer start(Options o, PrintStream out)
            throws IOException, InterruptedException, KvBudgetExceededException,
                    LlamaEngine.ContextAllocationException {
        boolean demo = o.model() == null;
        Path modelFile = demo ? DemoModel.ensure(o.shape()) : o.model();
        ModelShape shape = demo ? o.shape() : GgufInfo.read(modelFile).shape(modelName(modelFile));
        int ctx = KvBudget.roundCtx(o.ctxSize());
        KvBudget budget = KvBudget.of(o.kvBudgetBytes(), shape);
        out.println(PREFIX + budget.capacityLine(ctx));
        if (!budget.holds(ctx)) {
            throw new KvBudgetExceededException(budget.refusalLine(ctx));
        }
        String modelId = demo ? "ctxprobe-" + shape.name() : shape.name();
        OpenAiServer server = OpenAiServer.start(o.host(), o.port(), modelId, shape.vocabSize());
        try {
            server.attach(LlamaEngine.load(modelFile, ctx, o.threads(), demo));
        } catch (LlamaEngine.ContextAllocationException | RuntimeException e) {
            server.close();
            throw e;
        }
        out.println(PREFIX + "ready on http://" + o.host() + ":" + server.port() + " (ctx-size " + ctx + ", model "
                + modelFile + ")");
        return server;
    }

    private static String modelName(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }
}
