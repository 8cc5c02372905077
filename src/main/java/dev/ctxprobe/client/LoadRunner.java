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
import java.util.concurrent.locks.LockSupport;

/**
 * Sends one step's requests: warm-ups one by one, then the measured ones with Poisson arrivals,
 * capped in concurrency, each on its own virtual thread. One runner runs one plan once.
 */
public final class LoadRunner {

    /** Fixed, so a step's arrival times are the same on every run (vLLM's benchmark uses seed 0 too). */
    static final long ARRIVAL_SEED = 0;

    private final LoadPlan plan;
    private final CompletionClient client;
    private volatile boolean cancelled;
    private volatile Thread runningThread;

    public LoadRunner(LoadPlan plan) {
        this.plan = plan;
        this.client = new CompletionClient(plan.baseUrl(), plan.requestTimeout(), plan.maxConcurrency(), plan.apiKey());
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
                warmups.addAll(await(List.of(threads.submit(() -> client.send(request)))));
            }
            checkCancelled();
            List<CompletionRequest> measured = new ArrayList<>(plan.numPrompts());
            for (int i = 0; i < plan.numPrompts(); i++) {
                measured.add(request(i, false, i));
            }
            double[] offsets = arrivalOffsets(plan.numPrompts(), plan.requestRate(), ARRIVAL_SEED);
            long windowStart = System.nanoTime();
            List<RequestRecord> records = await(submitMeasured(threads, measured, offsets, windowStart));
            return new LoadResult(warmups, records, windowStart, System.nanoTime());
        } catch (InterruptedException e) {
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

    private List<Future<RequestRecord>> submitMeasured(
            ExecutorService threads, List<CompletionRequest> requests, double[] offsets, long windowStart)
            throws InterruptedException {
        Semaphore slots = new Semaphore(plan.maxConcurrency());
        List<Future<RequestRecord>> futures = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            sleepUntil(windowStart + (long) (offsets[i] * 1e9));
            CompletionRequest request = requests.get(i);
            // Arrivals keep their schedule; a request waits for a free slot only once it has arrived.
            futures.add(threads.submit(() -> {
                slots.acquire();
                try {
                    return client.send(request);
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
                records.add(future.get());
            } catch (ExecutionException e) {
                throw new IllegalStateException("a request thread failed unexpectedly", e.getCause());
            }
        }
        checkCancelled();
        return records;
    }

    private CompletionRequest request(int index, boolean warmup, long key) {
        byte[] body = TokenPrompts.body(plan.model(), plan.targetLen(), plan.outputLen(), plan.range(), key);
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
