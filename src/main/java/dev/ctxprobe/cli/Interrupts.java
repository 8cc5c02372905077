package dev.ctxprobe.cli;

import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped ssh session) for the whole of a run command, from before the run folder is opened until the command returns
 * its exit code: the first interrupts the run, which stops the live server's group and writes the partial results; a
 * second interrupts again, which turns the group's TERM into an immediate KILL. Once the servers are stopped and the
 * results and the report are being saved ({@link #finishing()}), a signal no longer interrupts anything: it cannot
 * make the save shorter, only break it. Any signal makes the exit code 130, or 129 when the first was SIGHUP (128 +
 * the signal, as a shell reports it; README.md#commands). The JVM's default would exit at once, leave the engine
 * running, and skip the save. After a hang-up nobody reads the console: the messages still go out (a write to a
 * closed terminal fails and is dropped), and what counts is that the step, the results and the report are saved.
 */
final class Interrupts implements AutoCloseable {
    private final SignalHandler previousInt;
    private final SignalHandler previousTerm;
    private final SignalHandler previousHup;
    private final AtomicInteger count = new AtomicInteger();
    /** The exit code the first signal asks for. */
    private volatile int exitCode = Main.INTERRUPTED;

    private volatile boolean finishing;

    private Interrupts(Thread worker) {
        SignalHandler handler = sig -> {
            int n = count.incrementAndGet();
            if (n == 1 && sig.getName().equals("HUP")) {
                exitCode = Main.HUNG_UP;
            }
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
        previousHup = Signal.handle(new Signal("HUP"), handler);
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

    /** The exit code of an interrupted run: 129 when a hang-up came first, 130 otherwise. */
    int exitCode() {
        return exitCode;
    }

    /**
     * In the ctxprobe process, a signal after the command's exit code is decided still ends it with 130 (129 for a
     * hang-up), as README.md#commands promises: the JVM's default handler would race {@code System.exit(0)} and lose.
     * Everything is saved by then, so the exit is immediate. In a test's JVM the earlier handlers come back.
     */
    @Override
    public void close() {
        if (Main.standalone()) {
            SignalHandler late =
                    sig -> Runtime.getRuntime().halt(sig.getName().equals("HUP") ? Main.HUNG_UP : Main.INTERRUPTED);
            Signal.handle(new Signal("INT"), late);
            Signal.handle(new Signal("TERM"), late);
            Signal.handle(new Signal("HUP"), late);
            return;
        }
        Signal.handle(new Signal("INT"), previousInt);
        Signal.handle(new Signal("TERM"), previousTerm);
        Signal.handle(new Signal("HUP"), previousHup);
    }
}
