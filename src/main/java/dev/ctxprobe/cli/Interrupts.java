package dev.ctxprobe.cli;

import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C and SIGTERM for the whole of a run command, from before the run folder is opened until the command returns
 * its exit code: the first interrupts the run, which stops the live server's group and writes the partial results; a
 * second interrupts again, which turns the group's TERM into an immediate KILL. Once the servers are stopped and the
 * results and the report are being saved ({@link #finishing()}), a signal no longer interrupts anything: it cannot
 * make the save shorter, only break it. Any signal makes the exit code 130. The JVM's default would exit at once,
 * leave the engine running, and skip the save.
 */
final class Interrupts implements AutoCloseable {
    private final SignalHandler previousInt;
    private final SignalHandler previousTerm;
    private final AtomicInteger count = new AtomicInteger();
    private volatile boolean finishing;

    private Interrupts(Thread worker) {
        SignalHandler handler = sig -> {
            int n = count.incrementAndGet();
            if (finishing) {
                System.err.println(
                        "\nctxprobe: the servers are stopped; saving the results and the report, then" + " exiting");
                return;
            }
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

    /** From now on signals are counted but interrupt nothing: the run is saving what it has. */
    void finishing() {
        finishing = true;
    }

    /** How many signals came. */
    int received() {
        return count.get();
    }

    @Override
    public void close() {
        Signal.handle(new Signal("INT"), previousInt);
        Signal.handle(new Signal("TERM"), previousTerm);
    }
}
