package dev.ctxprobe.embedded;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Benchmark, run on demand (never by the build): prefill time (TTFT) of the embedded engine by prompt length. Args:
 * shape and lengths, e.g. {@code micro 1024 4096 16384 32768 40000}. Prints a table and one JSON line.
 */
public final class PrefillBench {
    private PrefillBench() {}

    public static void main(String[] args) throws Exception {
        ModelShape shape = ModelShape.demo(args.length > 0 ? args[0] : "micro");
        int[] lengths = args.length > 1
                ? Arrays.stream(args, 1, args.length)
                        .mapToInt(Integer::parseInt)
                        .toArray()
                : new int[] {1024, 4096, 16384, 32768, 40000};
        int ctx = KvBudget.roundCtx(Arrays.stream(lengths).max().orElseThrow() + 1);
        Path model = DemoModel.ensure(shape);
        LlamaEngine engine =
                LlamaEngine.load(model, ctx, 1, Runtime.getRuntime().availableProcessors(), true);
        StringBuilder json = new StringBuilder("{\"shape\":\"" + shape.name() + "\",\"ctx\":" + ctx + ",\"ttft_ms\":{");
        System.out.printf(Locale.ROOT, "%10s %12s%n", "tokens", "ttft_ms");
        for (int i = 0; i < lengths.length; i++) {
            int[] ids = new int[lengths[i]];
            Arrays.setAll(ids, k -> ByteVocab.FIRST_BYTE + k % 256);
            long start = System.nanoTime();
            long[] first = {0};
            engine.complete(ids, 1, 1f, 1, text -> first[0] = System.nanoTime());
            double ms = (first[0] - start) / 1e6;
            System.out.printf(Locale.ROOT, "%10d %12.1f%n", lengths[i], ms);
            json.append(i == 0 ? "" : ",")
                    .append('"')
                    .append(lengths[i])
                    .append("\":")
                    .append(Math.round(ms));
        }
        System.out.println(json.append("}}"));
        // llama.cpp's server thread keeps the JVM alive.
        System.exit(0);
    }
}
