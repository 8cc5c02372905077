package dev.ctxprobe.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends one step's requests: warm-ups one by one, then the measured ones with Poisson arrivals,
 * capped in concurrency, each on its own virtual thread. One runner runs one plan once. A failed warm-up ends
 * the step's requests, and a measured request that times out or loses its server stops those not yet sent, so a
 * hung server costs about two request timeouts, not one per request.
 */
public final class LoadRunner {

    /** Fixed, so a step's arrival times are the same on every run (vLLM's benchmark uses seed 0 too). */
    static final long ARRIVAL_SEED = 0;

    /**
     * Measured bodies that together fit in this are all built before the window opens: built in their slots, 1000
     * streams' bodies take the CPU while the first streams' events arrive, and those events' stamps wait for it.
     * Small enough to keep the footprint's bars (BENCHMARKS.md, "memory"): 1000 bodies of 1k tokens fit, ten of
     * 128k tokens do not, and those long prompts' prefill dwarfs the building anyway.
     */
    static final long PREBUILT_BODY_BYTES = 8L << 20;

    /** About the most bytes one prompt token takes in a body: up to five digits and a comma. */
    private static final long BODY_BYTES_PER_TOKEN = 6;

    private final LoadPlan plan;
    private final CompletionClient client;
    private final RequestObserver observer;
    private volatile boolean cancelled;
    private volatile Thread runningThread;

    public LoadRunner(LoadPlan plan) {
        this(plan, RequestObserver.NONE);
    }

    /** A runner that tells {@code observer} when each request goes out and when its first token arrives. */
    public LoadRunner(LoadPlan plan, RequestObserver observer) {
        this.plan = plan;
        this.observer = observer;
        this.client = new CompletionClient(plan.baseUrl(), plan.requestTimeout(), plan.apiKey(), plan.limits());
    }

    /**
     * Runs the plan and returns every record.
     *
     * @throws InterruptedException when the thread is interrupted or {@link #cancel()} is called;
     *     in-flight requests are cancelled before it is thrown
     */
    public LoadResult run() throws InterruptedException {
        runningThread = Thread.currentThread();
        // Every send runs on a virtual thread: a platform thread blocked in a socket read ignores
        // interrupts, while waiting on a Future does not.
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
        try {
            List<RequestRecord> warmups = new ArrayList<>();
            for (int i = 0; i < plan.warmup(); i++) {
                // Keys after the measured ones, so no warm-up shares a prefix with a measured request.
                CompletionRequest request = request(i, true, plan.numPrompts() + (long) i);
                checkCancelled();
                RequestRecord r = await(List.of(threads.submit(() -> client.send(request, observer))))
                        .getFirst();
                warmups.add(r);
                if (!r.ok()) {
                    // The step has failed; measuring a server that cannot answer would only add timeouts.
                    long now = System.nanoTime();
                    return new LoadResult(warmups, List.of(), now, now);
                }
            }
            checkCancelled();
            double[] offsets = arrivalOffsets(plan.numPrompts(), plan.requestRate(), ARRIVAL_SEED);
            CompletionRequest[] bodies = prebuilt(offsets.length);
            long windowStart = System.nanoTime();
            List<RequestRecord> records = await(submitMeasured(threads, offsets, bodies, windowStart));
            return new LoadResult(warmups, records, windowStart, System.nanoTime());
        } catch (InterruptedException | RuntimeException e) {
            // Whatever ends the run early, requests still in flight must not hold it for their timeout.
            client.cancelAll();
            throw e;
        } finally {
            runningThread = null;
            try {
                threads.shutdownNow();
                // Cancelled calls end promptly, and the call timeout bounds any that do not.
                threads.awaitTermination(plan.requestTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
            } finally {
                client.close();
            }
        }
    }

    /** Stops a running {@link #run()} at once, from any thread: cancels in-flight calls. */
    public void cancel() {
        cancelled = true;
        client.cancelAll();
        Thread thread = runningThread;
        if (thread != null) {
            thread.interrupt();
        }
    }

    /** Every measured request, built, when their bodies fit in {@link #PREBUILT_BODY_BYTES}; else null. */
    private CompletionRequest[] prebuilt(int count) {
        if (plan.targetLen() * BODY_BYTES_PER_TOKEN * count > PREBUILT_BODY_BYTES) {
            return null;
        }
        CompletionRequest[] requests = new CompletionRequest[count];
        for (int i = 0; i < count; i++) {
            requests[i] = request(i, false, i);
        }
        return requests;
    }

    /** The prebuilt request at {@code index}, let go of by the array so that a sent body can be collected. */
    private static CompletionRequest taken(CompletionRequest[] bodies, int index) {
        CompletionRequest request = bodies[index];
        bodies[index] = null;
        return request;
    }

    private List<Future<RequestRecord>> submitMeasured(
            ExecutorService threads, double[] offsets, CompletionRequest[] bodies, long windowStart)
            throws InterruptedException {
        Semaphore slots = new Semaphore(plan.maxConcurrency());
        AtomicBoolean abandoned = new AtomicBoolean();

        List<Future<RequestRecord>> futures = new ArrayList<>(offsets.length);
        for (int i = 0; i < offsets.length && !abandoned.get(); i++) {
            sleepUntil(windowStart + (long) (offsets[i] * 1e9));
            int index = i;
            // Arrivals keep their schedule; a request waits for a free slot only once it has arrived.
            futures.add(threads.submit(() -> {
                slots.acquire();
                try {
                    if (abandoned.get()) {
                        return null;
                    }
                    // Otherwise built in its slot, so at most max_concurrency bodies of a 10M-token prompt are held
                    // at once; still before send(), where the clock starts.
                    CompletionRequest request = bodies != null ? taken(bodies, index) : request(index, false, index);
                    RequestRecord r = client.send(request, observer);
                    if (r.outcome() == RequestOutcome.TIMEOUT || r.outcome() == RequestOutcome.CONNECTION_FAILED) {
                        // A hung or dead server: requests not yet sent would each wait out the timeout too.
                        abandoned.set(true);
                    }
                    return r;
                } finally {
                    slots.release();
                }
            }));
        }
        return futures;
    }

    private List<RequestRecord> await(List<Future<RequestRecord>> futures) throws InterruptedException {
        List<RequestRecord> records = new ArrayList<>(futures.size());
        for (Future<RequestRecord> future : futures) {
            try {
                RequestRecord r = future.get();
                if (r != null) {
                    records.add(r);
                }
            } catch (ExecutionException e) {
                throw new IllegalStateException("a request thread failed unexpectedly: " + e.getCause(), e.getCause());
            }
        }
        checkCancelled();
        return records;
    }

    private CompletionRequest request(int index, boolean warmup, long key) {
        PasskeyPrompt passkey = plan.passkey();
        // Warm-ups stay random: only the measured requests are judged on their answer.
        byte[] body = passkey != null && !warmup && index < passkey.count()
                ? TokenPrompts.body(plan.model(), passkey.ids(index), plan.outputLen())
                : TokenPrompts.body(plan.model(), plan.targetLen(), plan.outputLen(), plan.range(), key);
        return new CompletionRequest(index, warmup, plan.targetLen(), body);
    }

    /**
     * Seconds after the window start at which each request arrives: the first at once, then
     * exponential gaps with mean {@code 1/rate}; all zero for an infinite rate.
     */
    static double[] arrivalOffsets(int count, double rate, long seed) {
        double[] offsets = new double[count];
        if (Double.isInfinite(rate)) {
            return offsets;
        }
        Random random = new Random(seed);
        for (int i = 1; i < count; i++) {
            offsets[i] = offsets[i - 1] - Math.log(1 - random.nextDouble()) / rate;
        }
        return offsets;
    }

    private void sleepUntil(long deadlineNanos) throws InterruptedException {
        long remaining;
        while ((remaining = deadlineNanos - System.nanoTime()) > 0) {
            LockSupport.parkNanos(remaining);
            checkCancelled();
        }
        checkCancelled();
    }

    private void checkCancelled() throws InterruptedException {
        if (cancelled || Thread.interrupted()) {
            cancelled = true;
            throw new InterruptedException("load run cancelled");
        }
    }
}
