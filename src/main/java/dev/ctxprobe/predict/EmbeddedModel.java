package dev.ctxprobe.predict;

import dev.ctxprobe.embedded.GgufInfo;
import dev.ctxprobe.embedded.KvBudget;
import dev.ctxprobe.embedded.LlamaEngine;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.KvFit;
import dev.ctxprobe.results.Source;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code ctxprobe serve}'s rules for one target, exactly as {@code EmbeddedServer.start} applies them: the context is
 * {@code --ctx-size} rounded up to 32, it must fit {@link KvBudget#of} the {@code --kv-memory} budget, and a prompt
 * plus one output token must fit the context, or with {@code --parallel N} a slot's {@code n_ctx / N} of it.
 */
public final class EmbeddedModel extends EngineModel {
    /** The embedded engine's sizing, with {@code profile}'s prompt rule. */
    public static Sizing sizing(EngineProfile profile) {
        return new Sizing(profile, EmbeddedModel::new);
    }

    private static final String DEFAULT_CTX = "4096";
    private static final String DEFAULT_BUDGET = "1GiB";
    private static final String DEFAULT_SHAPE = "micro";

    EmbeddedModel(BackendSetup setup) {
        super(setup);
    }

    @Override
    KvFit apply(long target, Flags flags, Facts f, List<Check> checks, List<String> details) {
        String ctxText = value(flags, f, "--ctx-size", DEFAULT_CTX);
        Long ctxSize = Flags.number(ctxText);
        if (ctxSize == null || ctxSize < 1) {
            f.missing("--ctx-size", "'" + ctxText + "' is not a number of tokens");
            return null;
        }
        long budgetBytes;
        String budgetText = value(flags, f, "--kv-memory", DEFAULT_BUDGET);
        try {
            budgetBytes = KvBudget.parseSize(budgetText);
        } catch (IllegalArgumentException e) {
            f.missing("--kv-memory", e.getMessage());
            return null;
        }
        ModelShape shape = shape(flags, f);
        if (shape == null) {
            return null;
        }
        KvBudget budget = KvBudget.of(budgetBytes, shape);
        long ctx = KvBudget.roundCtx(Math.toIntExact(Math.min(ctxSize, Integer.MAX_VALUE)));
        details.add("KV budget " + Format.bytes(budgetBytes) + " / " + budget.bytesPerToken() + " B per token ("
                + shape.blockCount() + (shape.blockCount() == 1 ? " layer" : " layers") + " x 2 x "
                + shape.kvWidth() + " x 2 B f16 + "
                + KvBudget.CELL_BOOKKEEPING_BYTES + " B bookkeeping) = " + Format.tokens(budget.capacityTokens())
                + " tokens");
        boolean follows = s.follows("--ctx-size");
        String relation = s.relation(target, ctxSize, follows);
        boolean holds = budget.holds(ctx);
        checks.add(new Check(
                Bound.KV_MEMORY,
                holds,
                "ctx-size " + Format.tokens(ctxSize) + " (" + relation + ") rounded up to "
                        + KvBudget.CTX_PADDING + " = " + Format.tokens(ctx) + (holds ? " <= " : " > ")
                        + Format.tokens(budget.capacityTokens()) + " tokens the budget holds"
                        + (holds ? "" : ": \"kv budget exceeded\" at startup")));
        Integer parallel = parallel(flags, f);
        if (parallel == null) {
            return null;
        }
        if (parallel == 1) {
            long largestPrompt = s.profile.largestPrompt(ctxSize);
            boolean promptOk = target <= largestPrompt;
            checks.add(new Check(
                    BackendSetup.promptBound(follows),
                    promptOk,
                    "prompt " + Format.tokens(target) + " + 1 output token " + (promptOk ? "<= " : "> ")
                            + "the context " + Format.tokens(ctx)));
        } else {
            // Each slot holds n_ctx / N: the binding's llama.cpp has no unified KV cache (docs/engines.md, embedded).
            long slot = LlamaEngine.slotContext(Math.toIntExact(ctx), parallel);
            boolean promptOk = target <= slot - 1;
            checks.add(new Check(
                    Bound.ENGINE_SLOTS,
                    promptOk,
                    "prompt " + Format.tokens(target) + " + 1 output token " + (promptOk ? "<= " : "> ")
                            + "the slot's context " + Format.tokens(slot) + " (n_ctx " + Format.tokens(ctx)
                            + " / --parallel " + parallel + ")"));
        }
        KvFit fit = new KvFit(
                ctx, ctx * budget.bytesPerToken(), budgetBytes, budget.bytesPerToken(), 0, budget.capacityTokens());
        return fit;
    }

    /** {@code --parallel}, the slots that share out the context; 1 (and no input recorded) when not given. */
    private static Integer parallel(Flags flags, Facts f) {
        Flags.Found found = flags.find("--parallel");
        if (found == null) {
            return 1;
        }
        Long n = Flags.number(found.value());
        if (n == null || n < 1 || n > Integer.MAX_VALUE) {
            f.missing("--parallel", "'" + found.value() + "' is not a number of slots");
            return null;
        }
        f.input("--parallel", found.value(), Source.FLAG, flags.where());
        return n.intValue();
    }

    private static String value(Flags flags, Facts f, String name, String fallback) {
        Flags.Found found = flags.find(name);
        if (found == null) {
            f.input(name, fallback, Source.DEFAULT, "ctxprobe serve's default");
            return fallback;
        }
        f.input(name, found.value(), Source.FLAG, flags.where());
        return found.value();
    }

    /** The model's shape: from {@code --model FILE}'s GGUF header, else the demo shape of {@code --shape}. */
    static ModelShape shape(Flags flags, Facts f) {
        Flags.Found model = flags.find("--model");
        if (model != null) {
            Path file = Path.of(model.value());
            try {
                ModelShape shape = GgufInfo.read(file).shape(file.getFileName().toString());
                f.input("--model", model.value(), Source.FLAG, flags.where());
                return shape;
            } catch (IOException | IllegalArgumentException e) {
                f.missing("--model", file + " cannot be read: " + e.getMessage());
                return null;
            }
        }
        String name = value(flags, f, "--shape", DEFAULT_SHAPE);
        try {
            return ModelShape.demo(name);
        } catch (IllegalArgumentException e) {
            f.missing("--shape", e.getMessage());
            return null;
        }
    }
}
