package dev.ctxprobe.embedded;

import java.util.List;
import java.util.Locale;

/** The dimensions of a llama-architecture model: what the GGUF writer produces and the KV budget is computed from. */
public record ModelShape(
        String name,
        int blockCount,
        int embeddingLength,
        int headCount,
        int headCountKv,
        int feedForwardLength,
        long contextLength,
        int vocabSize) {

    /** The training context written into demo models: large so that llama.cpp accepts any ctx-size without warning. */
    public static final long DEMO_CONTEXT_LENGTH = 1_048_576;

    /** 1 layer, 1 head, width 32, FFN 64: the cheapest model that still runs real attention over the whole context. */
    public static final ModelShape MICRO =
            new ModelShape("micro", 1, 32, 1, 1, 64, DEMO_CONTEXT_LENGTH, ByteVocab.SIZE);

    /** 4 layers, 4 heads (2 for KV), width 128, FFN 256: about 16 times the attention cost of micro per token. */
    public static final ModelShape MINI =
            new ModelShape("mini", 4, 128, 4, 2, 256, DEMO_CONTEXT_LENGTH, ByteVocab.SIZE);

    public static final List<ModelShape> DEMO_SHAPES = List.of(MICRO, MINI);

    public ModelShape {
        if (blockCount < 1 || embeddingLength < 1 || headCount < 1 || headCountKv < 1 || feedForwardLength < 1) {
            throw new IllegalArgumentException("model dimensions must be positive: " + this);
        }
        if (embeddingLength % headCount != 0 || headCount % headCountKv != 0) {
            throw new IllegalArgumentException("width must divide into heads and heads into KV heads: "
                    + embeddingLength + "/" + headCount + "/" + headCountKv);
        }
    }

    /** The demo shape with this name, case-insensitively. */
    public static ModelShape demo(String name) {
        return DEMO_SHAPES.stream()
                .filter(s -> s.name.equals(name.toLowerCase(Locale.ROOT)))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown model shape '" + name + "', known: "
                        + DEMO_SHAPES.stream().map(ModelShape::name).toList()));
    }

    public int headDim() {
        return embeddingLength / headCount;
    }

    /** Width of the K (and V) rows stored per token and layer. */
    public int kvWidth() {
        return headDim() * headCountKv;
    }
}
