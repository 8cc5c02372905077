package dev.ctxprobe.predict;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.ServedCapacity;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The capacity map predicted from an engine's capacity arithmetic (docs/plan.md#the-capacity-map): how long a prompt
 * N requests can each send and still be held at once. N requests held together each keep {@code target +
 * output_len} tokens of KV cache: in one shared pool (vLLM's KV cache, SGLang's {@code max_total_num_tokens},
 * llama.cpp's {@code n_ctx} with a unified cache) that is the pool over N; with llama.cpp's split cache each slot
 * holds its own share of {@code -c} whatever the others do. An engine that runs fewer requests together than N (its
 * slots, {@code --max-num-seqs}, {@code --max-running-requests}) holds no N at once at any length. {@code plan}
 * applies it to what the engine's sizing predicts; the search to what the single-prompt servers stated.
 */
public final class SurfacePrediction {
    private SurfacePrediction() {}

    /**
     * What an engine holds for requests at once: the inputs of the arithmetic, each null where not known.
     *
     * @param poolTokens tokens of KV cache the requests in flight share
     * @param slots llama.cpp's slots ({@code -np}, {@code total_slots}): requests served at once at most
     * @param slotTokens with llama.cpp's split cache, the cells each slot holds ({@code n_ctx_slot}); null with a
     *     shared pool
     * @param maxRunning the engine's cap on the requests it runs together
     * @param maxRunningName the cap's name: {@code max_num_seqs}, {@code max_running_requests}
     */
    public record Holds(Long poolTokens, Integer slots, Long slotTokens, Integer maxRunning, String maxRunningName) {

        /** Nothing known: the single-prompt frontier over N. */
        public static final Holds UNKNOWN = new Holds(null, null, null, null, null);

        /** What a running server stated of its limits, as the arithmetic's inputs. */
        public static Holds of(ServedCapacity stated) {
            if (stated == null) {
                return UNKNOWN;
            }
            boolean split = stated.slots() != null && Boolean.FALSE.equals(stated.kvUnified());
            Long pool = stated.kvTokens();
            if (pool == null && stated.slots() != null && Boolean.TRUE.equals(stated.kvUnified())) {
                pool = stated.contextTokens();
            }
            return new Holds(
                    split ? null : pool,
                    stated.slots(),
                    split ? stated.contextTokens() : null,
                    stated.maxRunningRequests(),
                    stated.maxRunningRequests() == null ? null : "max_running_requests");
        }
    }

    /**
     * {@code sweep.concurrency: auto}'s levels (docs/search.md#the-capacity-map): 2, 4, 8 ... while the engine holds
     * that many at once by what it states: its slots, its cap on running requests, and a pool that keeps at least one
     * {@code align} step of prompt and the output for each; at most {@code max}. Empty when it states none of them.
     */
    public static List<Integer> autoLevels(Holds holds, long align, int outputLen, int max) {
        long most = Long.MAX_VALUE;
        if (holds.slots() != null) {
            most = Math.min(most, holds.slots());
        }
        if (holds.maxRunning() != null) {
            most = Math.min(most, holds.maxRunning());
        }
        if (holds.poolTokens() != null && holds.slots() == null) {
            most = Math.min(most, holds.poolTokens() / (align + outputLen));
        }
        List<Integer> levels = new ArrayList<>();
        if (most == Long.MAX_VALUE) {
            return levels;
        }
        for (long n = 2; n <= Math.min(most, max); n *= 2) {
            levels.add((int) n);
        }
        return levels;
    }

    /** Why {@link #autoLevels} stops where it does, in words: {@code up to 4 slots}. */
    public static String autoBound(Holds holds, long align, int outputLen) {
        List<String> why = new ArrayList<>();
        if (holds.slots() != null) {
            why.add(holds.slots() + " slots");
        }
        if (holds.maxRunning() != null) {
            why.add(holds.maxRunningName() + " " + holds.maxRunning());
        }
        if (holds.poolTokens() != null && holds.slots() == null) {
            why.add(String.format(
                    Locale.ROOT, "KV pool %,d / (align %d + %d output)", holds.poolTokens(), align, outputLen));
        }
        return why.isEmpty() ? "nothing stated: no level" : "up to " + String.join(", ", why);
    }

    /**
     * Why {@code n} requests are never held together by an engine that states fewer slots or running requests:
     * {@code more requests than slots (8 at once, the server has 4)}; null when it holds as many.
     */
    public static String beyondCap(int n, Holds holds) {
        if (holds.slots() != null && n > holds.slots()) {
            return String.format(
                    Locale.ROOT, "more requests than slots (%d at once, the server has %d)", n, holds.slots());
        }
        if (holds.maxRunning() != null && n > holds.maxRunning()) {
            return String.format(
                    Locale.ROOT,
                    "more requests than %s (%d at once, the server runs %d)",
                    holds.maxRunningName(),
                    n,
                    holds.maxRunning());
        }
        return null;
    }

    /** A cap on requests as a flag gives it: null for none, 0 or less. */
    static Integer requests(Long flag) {
        return flag == null || flag < 1 ? null : (int) Math.min(Integer.MAX_VALUE, flag);
    }

    /**
     * The largest target {@code n} requests are predicted to hold at once, aligned down to {@code align} (a target
     * below one align step is kept as it is), never above the single-prompt frontier {@code single}.
     *
     * @param outputLen tokens each request generates, kept beside its prompt
     */
    public static BackendPrediction.Level level(int n, long single, int outputLen, long align, Holds holds) {
        if (holds.slots() != null && n > holds.slots()) {
            return new BackendPrediction.Level(n, null, "more requests than " + holds.slots() + " slots");
        }
        if (holds.maxRunning() != null && n > holds.maxRunning()) {
            return new BackendPrediction.Level(
                    n, null, "more requests than " + holds.maxRunningName() + " " + holds.maxRunning());
        }
        long raw;
        String why;
        if (holds.slotTokens() != null) {
            raw = holds.slotTokens() - outputLen;
            why = String.format(Locale.ROOT, "each slot holds %,d - %d output", holds.slotTokens(), outputLen);
        } else if (holds.poolTokens() != null) {
            raw = holds.poolTokens() / n - outputLen;
            why = String.format(Locale.ROOT, "KV pool %,d / %d - %d output", holds.poolTokens(), n, outputLen);
        } else {
            raw = single / n;
            why = String.format(Locale.ROOT, "the single-prompt frontier %,d / %d: no KV pool known", single, n);
        }
        if (raw > single) {
            raw = single;
            why = String.format(
                    Locale.ROOT,
                    "the single-prompt frontier %,d (%s%s)",
                    single,
                    why,
                    holds.slotTokens() != null ? "" : " holds more");
        }
        if (raw < 1) {
            return new BackendPrediction.Level(n, null, why + ": no prompt fits");
        }
        long target = raw >= align ? raw / align * align : raw;
        return new BackendPrediction.Level(n, target, why);
    }
}
