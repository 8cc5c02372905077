package dev.ctxprobe.explore;

/** What the startup and progress watches share in their {@code close}: waiting for the watching thread to end. */
final class WatchThreads {
    private WatchThreads() {}

    /**
     * Waits until {@code thread} has ended, even when this thread is interrupted meanwhile: a watch that reached a
     * verdict is stopping the server, and its caller must not go on before that stop. An interrupt is kept for later.
     */
    static void awaitEnd(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
