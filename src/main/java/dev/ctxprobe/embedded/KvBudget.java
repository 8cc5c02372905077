package dev.ctxprobe.embedded;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The KV memory budget of {@code ctxprobe serve} and what it holds: {@code budget / bytesPerToken} tokens, where a
 * token costs its f16 K and V rows in every layer plus llama.cpp's per-cell bookkeeping.
 */
public record KvBudget(long budgetBytes, long bytesPerToken) {

    /** Per-cell bookkeeping llama.cpp keeps resident next to the KV rows (measured, about 64 B). */
    public static final long CELL_BOOKKEEPING_BYTES = 64;

    /** llama.cpp rounds n_ctx up to this (without flash attention). */
    public static final int CTX_PADDING = 32;

    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]i?b?|b)?", Pattern.CASE_INSENSITIVE);

    public KvBudget {
        if (budgetBytes <= 0 || bytesPerToken <= 0) {
            throw new IllegalArgumentException("budget and bytes per token must be positive");
        }
    }

    /** The budget for a model of this shape with an f16 KV cache. */
    public static KvBudget of(long budgetBytes, ModelShape shape) {
        long kv = (long) shape.blockCount() * 2 * shape.kvWidth() * 2;
        return new KvBudget(budgetBytes, kv + CELL_BOOKKEEPING_BYTES);
    }

    public long capacityTokens() {
        return budgetBytes / bytesPerToken;
    }

    public boolean holds(long ctxTokens) {
        return ctxTokens <= capacityTokens();
    }

    /** n_ctx as llama.cpp will allocate it. */
    public static int roundCtx(int requested) {
        return Math.ceilDiv(requested, CTX_PADDING) * CTX_PADDING;
    }

    /** The stable startup line (without the {@code ctxprobe-serve: } prefix). */
    public String capacityLine(long ctx) {
        return String.format(
                Locale.US, "kv capacity %,d tokens in %,d bytes, ctx-size %,d", capacityTokens(), budgetBytes, ctx);
    }

    /** The stable refusal line (without the prefix), vLLM-like: names the capacity and the request. */
    public String refusalLine(long ctx) {
        return String.format(
                Locale.US,
                "kv budget exceeded: %,d bytes hold %,d tokens, %,d requested",
                budgetBytes,
                capacityTokens(),
                ctx);
    }

    /** Parses {@code 6000000}, {@code 8MiB}, {@code 1GiB}, {@code 512k} (binary multiples, as memory is sized). */
    public static long parseSize(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size: '" + text + "' (examples: 6000000, 8MiB, 1GiB)");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
        int shift = switch (unit.charAt(0)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException("size too large: " + text);
        }
        return n << shift;
    }
}
