package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * One socket's response bytes on their way from the thread that reads them off the socket (the writer, {@link
 * ReadLoop}'s thread) to the one thread that parses them (the reader, the stream's thread), each chunk with the
 * moment it was read, as an {@link InputStream}.
 *
 * <p>Assumptions (what the inbox relies on and does not check):
 *
 * <ul>
 *   <li>One writer thread calls {@link #offer}, {@link #publish}, {@link #end} and {@link #fail}, never two at once;
 *       after {@link #end} or {@link #fail} it offers nothing more.
 *   <li>One reader thread at a time calls the {@code read} methods and {@link #arrivalNanos}.
 *   <li>When {@link #offer} says to stop, the writer reads no more of the socket until the inbox asks it to resume
 *       (the {@code resume} given at construction), and it tolerates being asked to resume when it already reads.
 *   <li>{@code resume} and {@code dropped} return at once: they only hand a request to the writer's thread.
 * </ul>
 *
 * <p>Guarantees:
 *
 * <ul>
 *   <li>The writer never blocks and never waits for the reader; only the reader blocks, in {@code read}, and only
 *       while nothing is queued and the stream has not ended, failed or been closed.
 *   <li>The reader gets every offered byte exactly once, in the order offered, and {@link #arrivalNanos} is the stamp
 *       of the chunk its latest read came from.
 *   <li>The end of the stream (-1) and a failure (its exception thrown) come only after every byte offered before
 *       them has been read; a failure of the heap ({@link #failDropping}) drops the bytes still queued instead.
 *   <li>A waiting reader wakes for bytes once the writer calls {@link #publish} after offering them (the writer
 *       wakes it once per batch, not per chunk), and at once for an end, a failure or a close.
 *   <li>Back-pressure: once {@link #PAUSE_BYTES} or more are queued unread, {@link #offer} tells the writer to stop
 *       reading this socket, and the inbox asks it to resume once the reader has taken every queued byte. A resume is
 *       never lost: when the reader empties the queue as the writer is told to stop, one of the two resumes.
 *   <li>{@link #close} may be called by any thread, any number of times: it closes the socket, tells the writer
 *       ({@code dropped}) so that it lets go of the socket now, and ends a waiting read at once; every read after
 *       it fails with a {@link SocketException}, whatever was queued.
 *   <li>An interrupt of the reader while it waits closes the inbox as {@link #close} does and fails the read with a
 *       {@link SocketException}; the thread's interrupt status stays set.
 * </ul>
 */
final class Inbox extends InputStream {
    /** A reader's unparsed bytes past this stop the writer reading its socket until the reader catches up. */
    static final long PAUSE_BYTES = 256 * 1024;

    /** Bytes as the writer read them, and when. */
    private record Chunk(byte[] bytes, long stampNanos) {}

    private final SocketChannel channel;
    private final Consumer<Inbox> resume;
    private final Runnable dropped;
    private final ConcurrentLinkedQueue<Chunk> chunks = new ConcurrentLinkedQueue<>();
    private final AtomicLong queued = new AtomicLong();
    private volatile boolean ended;
    /** An IOException of the socket, or an Error of the writer's while reading it (out of memory). */
    private volatile Throwable failure;

    private volatile boolean closed;
    private volatile boolean paused;
    private volatile Thread waiter;

    /** The reader's own. */
    private Chunk current;

    private int position;
    private long arrivalNanos;

    /**
     * @param channel the socket the writer reads; closed by {@link #close}
     * @param resume asks the writer to read this inbox's socket again after {@link #offer} told it to stop
     * @param dropped tells the writer that the socket is closed, so that it lets go of it now
     */
    Inbox(SocketChannel channel, Consumer<Inbox> resume, Runnable dropped) {
        this.channel = channel;
        this.resume = resume;
        this.dropped = dropped;
    }

    /** The socket the writer reads. */
    SocketChannel channel() {
        return channel;
    }

    // The writer's side.

    /**
     * Queues {@code bytes}, read at {@code stampNanos}. False when the reader is now {@link #PAUSE_BYTES} or more
     * behind: the writer stops reading the socket until {@code resume} asks again.
     */
    boolean offer(byte[] bytes, long stampNanos) {
        chunks.add(new Chunk(bytes, stampNanos));
        if (queued.addAndGet(bytes.length) < PAUSE_BYTES) {
            return true;
        }
        paused = true;
        // The reader may have emptied the queue before the flag was set, and then asked for nothing: go on reading.
        if (queued.get() == 0 && paused) {
            paused = false;
            return true;
        }
        return false;
    }

    /** Wakes a waiting reader for the bytes offered since the last call. */
    void publish() {
        Thread t = waiter;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** The socket's stream ended: after the queued bytes, a read returns -1. */
    void end() {
        ended = true;
        publish();
    }

    /** Reading the socket failed: after the queued bytes, a read throws {@code failure}. */
    void fail(Throwable failure) {
        this.failure = failure;
        publish();
    }

    /** The heap is full, most likely of this stream's bytes: they go, and the next read throws {@code error}. */
    void failDropping(Error error) {
        chunks.clear();
        fail(error);
    }

    // The reader's side.

    /** When the bytes of the latest read were read off the socket (System.nanoTime); 0 before any. */
    long arrivalNanos() {
        return arrivalNanos;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        while (true) {
            if (closed) {
                throw new SocketException("socket closed while waiting for the server's answer");
            }
            if (current != null && position < current.bytes().length) {
                int n = Math.min(len, current.bytes().length - position);
                System.arraycopy(current.bytes(), position, b, off, n);
                position += n;
                arrivalNanos = current.stampNanos();
                return n;
            }
            // The end and the failure are read before the queue: the writer sets them after its last offer, so an
            // empty queue seen after them is empty for good.
            boolean over = ended;
            Throwable f = failure;
            Chunk next = chunks.poll();
            if (next != null) {
                current = next;
                position = 0;
                if (queued.addAndGet(-next.bytes().length) == 0 && paused) {
                    paused = false;
                    resume.accept(this);
                }
                continue;
            }
            if (f instanceof IOException io) {
                throw io;
            }
            if (f instanceof Error error) {
                // The reader meets the writer's OutOfMemoryError as it would have met its own.
                throw error;
            }
            if (f != null) {
                throw new IOException("the client's read loop failed", f);
            }
            if (over) {
                return -1;
            }
            awaitBytes();
        }
    }

    private void awaitBytes() throws IOException {
        waiter = Thread.currentThread();
        try {
            while (chunks.isEmpty() && !ended && failure == null && !closed) {
                LockSupport.park(this);
                if (Thread.currentThread().isInterrupted()) {
                    close();
                    throw new SocketException("closed by interrupt while waiting for the server's answer");
                }
            }
        } finally {
            waiter = null;
        }
    }

    // Either side, or a third thread (a request's deadline).

    /** Closes the socket and ends any wait at once; safe from any thread, repeatedly. */
    @Override
    public void close() {
        closed = true;
        try {
            channel.close();
        } catch (IOException e) {
            // Closing is all that was asked; a socket that fails to close is closed as far as this stream goes.
        }
        publish();
        dropped.run();
    }
}
