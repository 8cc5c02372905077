package dev.ctxprobe.cli;

import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C and SIGTERM during a run: the first interrupts the run, which stops the live server's group and writes
 * the partial results; a second interrupts again, which turns the group's TERM into an immediate KILL. The
 * JVM's default would exit at once and leave the engine running.
 */
final class Interrupts implements AutoCloseable {
    private final SignalHandler previousInt;
    private final SignalHandler previousTerm;

    private Interrupts(Thread worker) {
        AtomicInteger count = new AtomicInteger();
        SignalHandler handler = sig -> {
            int n = count.incrementAndGet();
            System.err.println(
                    n == 1
                            ? "\nctxprobe: stopping the server and saving partial results (Ctrl-C again to kill at once)"
                            : "\nctxprobe: killing the server group now");
            worker.interrupt();
        };
        previousInt = Signal.handle(new Signal("INT"), handler);
        previousTerm = Signal.handle(new Signal("TERM"), handler);
    }

    static Interrupts install(Thread worker) {
        return new Interrupts(worker);
    }

    @Override
    public void close() {
        Signal.handle(new Signal("INT"), previousInt);
        Signal.handle(new Signal("TERM"), previousTerm);
    }
}
