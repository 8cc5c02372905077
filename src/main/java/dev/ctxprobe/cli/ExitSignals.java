package dev.ctxprobe.cli;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C, SIGTERM and SIGHUP up to the very end of the ctxprobe process (README.md#commands): a signal ends it with a
 * signal's exit code, never 0, also when it comes while the process is exiting.
 *
 * <p>Two holes are closed. A signal's Java handler runs on a thread of its own, and the JVM's default one (run the
 * shutdown hooks, exit 128 + the signal) races the main thread's {@code System.exit}: the first to start the exit
 * wins, so a late signal could lose to an exit with 0. And once the JVM's exit has begun it stops its signal thread,
 * then waits for its compiler threads (up to 390 ms measured under load): a signal then runs no Java handler at all.
 * So each signal is noted as it is handled, and just before the exit the three signals go back to their defaults,
 * which end the process by the signal itself (130, 143, 129 as a shell reports them), and the exit code is the noted
 * signal's when one came. A signal the process was started ignoring (nohup) stays ignored.
 */
final class ExitSignals {
    private static final List<String> NAMES = List.of("INT", "TERM", "HUP");
    private static final Object LOCK = new Object();
    /** The names the JDK gives the threads that run signal handlers. */
    private static final List<String> HANDLER_THREADS =
            NAMES.stream().map(n -> "SIG" + n + " handler").toList();

    /** 128 + the first signal noted; 0 while none came. Guarded by {@link #LOCK}. */
    private static int first;

    private ExitSignals() {}

    /** From the start of the process: notes each signal, then lets the handler there was (the JVM's) act on it. */
    static void watch() {
        for (String name : NAMES) {
            Signal signal = new Signal(name);
            SignalHandler[] previous = new SignalHandler[1];
            try {
                previous[0] = Signal.handle(signal, s -> {
                    synchronized (LOCK) {
                        if (first == 0) {
                            first = 128 + s.getNumber();
                        }
                    }
                    SignalHandler p = previous[0];
                    if (p == SignalHandler.SIG_DFL) {
                        Runtime.getRuntime().exit(128 + s.getNumber());
                    } else if (p != SignalHandler.SIG_IGN) {
                        p.handle(s);
                    }
                });
            } catch (IllegalArgumentException reservedByTheVm) {
                // -Xrs: the JVM leaves the signal at its default, which ends the process by it.
            }
        }
    }

    /**
     * The code to exit with, to be called last: from here on the signals end the process by themselves, and a signal
     * noted before makes the code its own. What was printed is flushed first; everything else is saved by then.
     */
    static int exitCode(int code) {
        System.out.flush();
        System.err.flush();
        for (String name : NAMES) {
            try {
                Signal.handle(new Signal(name), SignalHandler.SIG_DFL);
            } catch (IllegalArgumentException reservedByTheVm) {
                // -Xrs: already at its default.
            }
        }
        awaitHandlers();
        synchronized (LOCK) {
            return first != 0 ? first : code;
        }
    }

    /**
     * Lets every signal the JVM took before the defaults came back reach its Java handler. The JVM hands signals to
     * Java one at a time, each on a thread it starts before it takes the next, lower signal numbers first: once a
     * SIGWINCH raised now (28, above the three; ignored by default and unused by the JVM) has run its handler, each
     * earlier signal's handler thread is started, and those still running are waited for (at most a second each).
     * Their handlers end the process themselves; one that returns has noted its signal by then.
     */
    private static void awaitHandlers() {
        CountDownLatch passed = new CountDownLatch(1);
        try {
            Signal fence = new Signal("WINCH");
            SignalHandler previous = Signal.handle(fence, s -> passed.countDown());
            Signal.raise(fence);
            passed.await(1, TimeUnit.SECONDS);
            Signal.handle(fence, previous);
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (HANDLER_THREADS.contains(t.getName())) {
                    t.join(1000);
                }
            }
        } catch (IllegalArgumentException notAllowed) {
            // -Xrs or a platform without SIGWINCH: the exit goes on without the wait.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
