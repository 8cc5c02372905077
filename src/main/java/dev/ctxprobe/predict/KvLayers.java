package dev.ctxprobe.predict;

import java.util.ArrayList;
import java.util.List;

/**
 * A KV cache as a sum of layer groups, each needing a number of bytes for a context length: the shape of vLLM's
 * {@code max_memory_usage_bytes} (vllm/v1/core/kv_cache_utils.py), which sums each layer's spec.
 */
final class KvLayers {

    /** Layers that share one cache shape. */
    interface Group {
        /** Bytes the group needs for one request of {@code length} tokens. */
        long bytes(long length);

        /** Bytes per token at long lengths (0 for a group whose size is bounded). */
        double perToken();

        /** How the group is sized, as a line of arithmetic. */
        String line();
    }

    /**
     * Layers that keep every token: {@code cdiv(length / shards, block) * page} each, as FullAttentionSpec and
     * MLAAttentionSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py) compute it.
     */
    record Full(String line, int layers, long blockTokens, long pageBytes, int shards) implements Group {
        @Override
        public long bytes(long length) {
            return layers * ceilDiv(ceilDiv(length, shards), blockTokens) * pageBytes;
        }

        @Override
        public double perToken() {
            return (double) layers * pageBytes / blockTokens / shards;
        }
    }

    /**
     * Sliding-window layers: {@code (cdiv(min(window - 1 + batched, length), block) + 1) * page} each, as
     * SlidingWindowSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py) computes it.
     */
    record Sliding(String line, int layers, long window, long batched, long blockTokens, long pageBytes)
            implements Group {
        @Override
        public long bytes(long length) {
            long tokens = Math.min(window - 1 + batched, length);
            return layers * (ceilDiv(tokens, blockTokens) + 1) * pageBytes;
        }

        @Override
        public double perToken() {
            return 0;
        }
    }

    private final List<Group> groups;

    KvLayers(List<Group> groups) {
        this.groups = List.copyOf(groups);
    }

    long bytes(long length) {
        long total = 0;
        for (Group g : groups) {
            total = Math.addExact(total, g.bytes(length));
        }
        return total;
    }

    double perToken() {
        return groups.stream().mapToDouble(Group::perToken).sum();
    }

    /** The bytes of the bounded groups at {@code length}. */
    long fixedBytes(long length) {
        return groups.stream()
                .filter(g -> g.perToken() == 0)
                .mapToLong(g -> g.bytes(length))
                .sum();
    }

    List<String> lines() {
        List<String> lines = new ArrayList<>();
        for (Group g : groups) {
            lines.add(g.line());
        }
        return lines;
    }

    /**
     * The largest length in {@code [1, upper]} whose cache fits {@code available}, by binary search as vLLM's
     * {@code estimate_max_model_len} (vllm/v1/core/kv_cache_utils.py) does; 0 when not even one token fits.
     */
    long largestFitting(long available, long upper) {
        long lo = 1;
        long hi = upper;
        long best = 0;
        while (lo <= hi) {
            long mid = lo + (hi - lo) / 2;
            if (bytes(mid) <= available) {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return best;
    }

    static long ceilDiv(long a, long b) {
        return Math.ceilDiv(a, b);
    }

    /** {@code n} rounded up to a multiple of {@code to}. */
    static long roundUp(long n, long to) {
        return ceilDiv(n, to) * to;
    }
}
