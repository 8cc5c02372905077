package dev.ctxprobe.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One platform thread that reads every stream's socket as soon as bytes come, stamps them with that moment, and
 * hands them to the stream's own thread, which parses them when it gets a carrier. The TTFT clock ends at the
 * stamp: with each stream's thread reading its own socket, at 1000 streams on two cores the last of a burst of
 * first events waited for the others' threads to be scheduled, read and parsed, and that wait was counted as the
 * server's (BENCHMARKS.md, "Timing"). A stamp is taken once per wake-up of the selector, before any socket is
 * read, so the bytes of every socket that was readable then share it.
 */
final class ReadLoop {
    /** A stream's unparsed bytes past this stop the loop reading its socket until the stream catches up. */
    static final long PAUSE_BYTES = 256 * 1024;

    private static final int READ_BYTES = 64 * 1024;

    private static final class Holder {
        static final ReadLoop LOOP = start();
    }

    private final Selector selector;
    private final ConcurrentLinkedQueue<Inbox> arming = new ConcurrentLinkedQueue<>();
    /** The loop thread's own: every socket is read through it. */
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(READ_BYTES);

    private ReadLoop(Selector selector) {
        this.selector = selector;
    }

    /** The process's loop, started on first use. */
    static ReadLoop shared() {
        return Holder.LOOP;
    }

    private static ReadLoop start() {
        try {
            ReadLoop loop = new ReadLoop(Selector.open());
            Thread.ofPlatform()
                    .name("ctxprobe-reads")
                    .daemon(true)
                    .priority(Thread.MAX_PRIORITY)
                    .start(loop::run);
            return loop;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector for the client's sockets", e);
        }
    }

    /** Bytes as the loop read them, and when. */
    private record Chunk(byte[] bytes, long stampNanos) {}

    /**
     * One socket's bytes, read by the loop from {@link #watch} on and read out by one stream thread as an {@link
     * InputStream}. The channel must be connected and non-blocking.
     */
    final class Inbox extends InputStream {
        private final SocketChannel channel;
        private final ConcurrentLinkedQueue<Chunk> chunks = new ConcurrentLinkedQueue<>();
        private final AtomicLong queued = new AtomicLong();
        private volatile boolean ended;
        /** An IOException of the socket, or an Error of the loop's while reading it (out of memory). */
        private volatile Throwable failure;

        private volatile boolean closed;
        private volatile boolean paused;
        private volatile Thread waiter;
        /** The loop thread's own. */
        private SelectionKey key;

        private Chunk current;
        private int position;
        private long arrivalNanos;

        private Inbox(SocketChannel channel) {
            this.channel = channel;
        }

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
                Chunk next = chunks.poll();
                if (next != null) {
                    current = next;
                    position = 0;
                    if (queued.addAndGet(-next.bytes().length) == 0 && paused) {
                        paused = false;
                        request(this);
                    }
                    continue;
                }
                // Only once the queue is empty: bytes read before the end or the failure come first.
                Throwable f = failure;
                if (f instanceof IOException io) {
                    throw io;
                }
                if (f instanceof Error error) {
                    // The stream's thread meets the loop's OutOfMemoryError as it would have met its own.
                    throw error;
                }
                if (f != null) {
                    throw new IOException("the client's read loop failed", f);
                }
                if (ended) {
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

        /**
         * Closes the socket and ends any wait at once; the loop drops the socket now (a channel registered with a
         * selector keeps its descriptor until the selector next wakes). Safe from any thread, repeatedly.
         */
        @Override
        public void close() {
            closed = true;
            try {
                channel.close();
            } catch (IOException e) {
                // Closing is all that was asked; a socket that fails to close is closed as far as this stream goes.
            }
            wake();
            selector.wakeup();
        }

        private void wake() {
            Thread t = waiter;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    /** Starts reading {@code channel}: from now on its bytes are read, stamped and queued as they come. */
    Inbox watch(SocketChannel channel) {
        Inbox in = new Inbox(channel);
        request(in);
        return in;
    }

    private void request(Inbox in) {
        arming.add(in);
        selector.wakeup();
    }

    private void run() {
        while (true) {
            try {
                selector.select();
                long now = System.nanoTime();
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey k = it.next();
                    it.remove();
                    drain((Inbox) k.attachment(), k, now);
                }
                Inbox in;
                while ((in = arming.poll()) != null) {
                    arm(in);
                }
            } catch (IOException | RuntimeException | Error e) {
                // The loop must outlive any one socket's trouble, and a trouble that is not one socket's (a broken
                // selector, the heap full) is reported to every stream, which then fails instead of waiting for
                // bytes that would never be read.
                failAll(e);
            }
        }
    }

    // Reads all the socket has now: the bytes of one select share its stamp.
    private void drain(Inbox in, SelectionKey k, long now) {
        try {
            while (true) {
                buffer.clear();
                int n = in.channel.read(buffer);
                if (n > 0) {
                    byte[] bytes = new byte[n];
                    buffer.flip().get(bytes);
                    in.chunks.add(new Chunk(bytes, now));
                    if (in.queued.addAndGet(n) >= PAUSE_BYTES) {
                        in.paused = true;
                        k.interestOps(0);
                        // The stream may have drained the queue to 0 before the flag was set: it asks again then.
                        if (in.queued.get() == 0 && in.paused) {
                            in.paused = false;
                            k.interestOps(SelectionKey.OP_READ);
                        }
                        break;
                    }
                } else {
                    if (n < 0) {
                        in.ended = true;
                        k.cancel();
                    }
                    break;
                }
            }
        } catch (IOException e) {
            in.failure = e;
            k.cancel();
        } catch (OutOfMemoryError e) {
            // The heap is full, most likely of this stream's body: it fails (its queue goes), the loop and the
            // other streams go on.
            in.chunks.clear();
            in.failure = e;
            k.cancel();
        } catch (CancelledKeyException e) {
            // Closed meanwhile: the close woke its stream.
        }
        in.wake();
    }

    private void arm(Inbox in) {
        try {
            if (in.key == null) {
                in.key = in.channel.register(selector, SelectionKey.OP_READ, in);
            } else if (in.key.isValid()) {
                in.key.interestOps(SelectionKey.OP_READ);
            }
        } catch (IOException | CancelledKeyException e) {
            // A channel closed before the loop got to it: its stream must not wait for bytes never to be read.
            in.failure = new SocketException("socket closed before its answer was read");
            in.wake();
        }
    }

    private void failAll(Throwable e) {
        Throwable failure = e instanceof RuntimeException ? new IOException("the client's read loop failed", e) : e;
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Inbox in) {
                in.failure = failure;
                k.cancel();
                in.wake();
            }
        }
    }
}
