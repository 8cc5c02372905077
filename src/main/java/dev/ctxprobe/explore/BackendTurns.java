package dev.ctxprobe.explore;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.launch.Launcher;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The scheduler of {@code run --parallel}: explores up to {@code parallel} backends at once, each on a thread of its
 * own, the first waiting one that may run beside those running. Two backends take turns when they have the same
 * fixed port, or when their launcher says their servers cannot run together (the same accelerators).
 */
final class BackendTurns {

    /** The exploration of one backend, to its end. */
    interface Work {
        void explore(Plan.BackendPlan backend) throws Exploration.Interrupted;
    }

    private final List<Plan.BackendPlan> waiting;
    private final List<Plan.BackendPlan> running = new ArrayList<>();
    private final Function<Backend, Launcher> launchers;
    private final RunListener listener;
    /** The backends whose wait was already explained. */
    private final java.util.Set<String> told = new java.util.HashSet<>();

    private boolean stopped;

    BackendTurns(List<Plan.BackendPlan> backends, Function<Backend, Launcher> launchers, RunListener listener) {
        this.waiting = new ArrayList<>(backends);
        this.launchers = launchers;
        this.listener = listener;
    }

    /**
     * Runs {@code work} for every backend, at most {@code parallel} at once. A Ctrl-C interrupts the calling thread,
     * which passes it on to every backend (a second one too, to turn their stops into KILLs); each records its
     * interrupted step and stops its server before this returns.
     */
    void run(int parallel, Work work) throws Exploration.Interrupted {
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicReference<Throwable> broken = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        int threads = Math.min(parallel, waiting.size());
        for (int i = 0; i < threads; i++) {
            workers.add(Thread.ofPlatform().name("ctxprobe-backend-" + (i + 1)).unstarted(() -> {
                Plan.BackendPlan b;
                while ((b = next()) != null) {
                    try {
                        work.explore(b);
                    } catch (Exploration.Interrupted e) {
                        interrupted.set(true);
                        stop();
                    } catch (RuntimeException | Error e) {
                        // A bug of ctxprobe's: the other backends stop as for a Ctrl-C and the error surfaces.
                        broken.compareAndSet(null, e);
                        stop();
                        workers.forEach(Thread::interrupt);
                    } finally {
                        done(b);
                    }
                }
            }));
        }
        workers.forEach(Thread::start);
        for (Thread w : workers) {
            while (true) {
                try {
                    w.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted.set(true);
                    stop();
                    workers.forEach(Thread::interrupt);
                }
            }
        }
        if (broken.get() instanceof RuntimeException e) {
            throw e;
        }
        if (broken.get() instanceof Error e) {
            throw e;
        }
        if (interrupted.get()) {
            throw new Exploration.Interrupted();
        }
    }

    /** The next backend to explore, waiting while every one left clashes; null when none is left or on stop. */
    synchronized Plan.BackendPlan next() {
        while (!stopped && !waiting.isEmpty()) {
            for (Plan.BackendPlan b : waiting) {
                if (running.stream().noneMatch(r -> clash(r, b) != null)) {
                    waiting.remove(b);
                    running.add(b);
                    return b;
                }
            }
            // Every backend left waits on one that runs: each says why once, before the first wait.
            for (Plan.BackendPlan b : waiting) {
                if (told.add(b.backend().name())) {
                    running.stream()
                            .map(r -> clash(r, b))
                            .filter(java.util.Objects::nonNull)
                            .findFirst()
                            .ifPresent(reason ->
                                    listener.backendWaiting(b.backend().name(), reason));
                }
            }
            try {
                wait();
            } catch (InterruptedException e) {
                stopped = true;
            }
        }
        return null;
    }

    synchronized void done(Plan.BackendPlan b) {
        running.remove(b);
        notifyAll();
    }

    synchronized void stop() {
        stopped = true;
        notifyAll();
    }

    /** Why {@code b} may not run while {@code a} does, in the console's words; null when they may run together. */
    private String clash(Plan.BackendPlan a, Plan.BackendPlan b) {
        Backend x = a.backend();
        Backend y = b.backend();
        if (x.port() != null && x.port().equals(y.port())) {
            return "it uses port " + y.port() + " like " + x.name() + ", which runs";
        }
        Launcher lx = launchers.apply(x);
        if (lx == launchers.apply(y) && !lx.canRunTogether(x.env(), y.env())) {
            return "its devices are not disjoint from those of " + x.name()
                    + ", which runs (give the cells different CUDA_VISIBLE_DEVICES to run them together)";
        }
        return null;
    }
}
