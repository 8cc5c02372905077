package dev.ctxprobe.testengine;

/**
 * The KV pool the requests in flight share, as vLLM's and SGLang's schedulers use it (docs/search.md#held-at-once):
 * a request is admitted in arrival order when the pool has room for it and fewer than {@code maxRunning} are running,
 * and waits in the queue otherwise. With {@code preempt} (vLLM), a request is admitted for its prompt and takes one
 * more token per output token; one that finds the pool full is preempted: its cells go back to the pool and it waits
 * to be admitted again, then computes its prefill again. Without (SGLang), it is admitted only with room for its whole
 * output, so nothing is ever preempted.
 */
final class KvPool {
    private final long tokens;
    private final int maxRunning;
    private final boolean preempt;
    private long used;
    private int running;
    private long nextTicket;
    private long serving;
    private long preemptions;

    KvPool(long tokens, int maxRunning, boolean preempt) {
        this.tokens = tokens;
        this.maxRunning = maxRunning;
        this.preempt = preempt;
    }

    long tokens() {
        return tokens;
    }

    boolean preempts() {
        return preempt;
    }

    /** Waits until the request is admitted, in arrival order, with {@code need} tokens of the pool. */
    synchronized void admit(long need) throws InterruptedException {
        long ticket = nextTicket++;
        while (ticket != serving || used + need > tokens || (maxRunning > 0 && running >= maxRunning)) {
            wait();
        }
        serving++;
        used += need;
        running++;
        notifyAll();
    }

    /**
     * One more token for a running request that holds {@code held}; when the pool is full, the request is preempted
     * in the same step (its cells go back, counted) and false is returned: two requests never both give way.
     */
    synchronized boolean growOrPreempt(long held) {
        if (used + 1 > tokens) {
            release(held, true);
            return false;
        }
        used++;
        return true;
    }

    /** A request gives back its {@code held} tokens: finished, or preempted (then it is counted). */
    synchronized void release(long held, boolean preempted) {
        used -= held;
        running--;
        if (preempted) {
            preemptions++;
        }
        notifyAll();
    }

    synchronized long used() {
        return used;
    }

    synchronized long preemptions() {
        return preemptions;
    }

    synchronized int running() {
        return running;
    }

    synchronized long waiting() {
        return nextTicket - serving;
    }
}
