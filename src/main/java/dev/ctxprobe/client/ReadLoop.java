package dev.ctxprobe.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One platform thread that reads every stream's socket as soon as bytes come, stamps them with that moment, and
 * hands them to the stream's own thread through the socket's {@link Inbox} (whose Javadoc states what each side may
 * do), which parses them when it gets a carrier. The TTFT clock ends at the stamp: with each stream's thread reading
 * its own socket, with many streams on few cores the last of a burst of first events waited for the others' threads
 * to be scheduled, read and parsed, and that wait was counted as the server's (BENCHMARKS.md, "Timing"). A stamp is
 * taken once per wake-up of the selector, before any socket is read, so the bytes of every socket that was readable
 * then share it.
 */
final class ReadLoop {
    private static final int READ_BYTES = 64 * 1024;

    private static final class Holder {
        static final ReadLoop LOOP = start();
    }

    private final Selector selector;
    /** Inboxes whose sockets the loop is to start reading, handed over by the streams' threads. */
    private final ConcurrentLinkedQueue<Inbox> arming = new ConcurrentLinkedQueue<>();
    /** Inboxes whose readers caught up after the loop stopped reading their sockets. */
    private final ConcurrentLinkedQueue<Inbox> resuming = new ConcurrentLinkedQueue<>();
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

    /**
     * Starts reading {@code channel}, which must be connected and non-blocking: from now on its bytes are read,
     * stamped and queued as they come, in the inbox returned, which this loop's thread writes.
     */
    Inbox watch(SocketChannel channel) {
        Inbox in = new Inbox(channel, this::resume, selector::wakeup);
        arming.add(in);
        selector.wakeup();
        return in;
    }

    private void resume(Inbox in) {
        resuming.add(in);
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
                while ((in = resuming.poll()) != null) {
                    SelectionKey k = in.channel().keyFor(selector);
                    // A key that is gone or cancelled belongs to a socket that ended, failed or was closed.
                    if (k != null && k.isValid()) {
                        k.interestOps(SelectionKey.OP_READ);
                    }
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
                int n = in.channel().read(buffer);
                if (n > 0) {
                    byte[] bytes = new byte[n];
                    buffer.flip().get(bytes);
                    if (!in.offer(bytes, now)) {
                        k.interestOps(0);
                        break;
                    }
                } else {
                    if (n < 0) {
                        k.cancel();
                        in.end();
                    }
                    break;
                }
            }
        } catch (IOException e) {
            k.cancel();
            in.fail(e);
        } catch (OutOfMemoryError e) {
            // The heap is full, most likely of this stream's body: it fails (its queue goes), the loop and the
            // other streams go on.
            k.cancel();
            in.failDropping(e);
        } catch (CancelledKeyException e) {
            // Closed meanwhile: the close woke its stream.
        }
        in.publish();
    }

    private void arm(Inbox in) {
        try {
            in.channel().register(selector, SelectionKey.OP_READ, in);
        } catch (IOException | CancelledKeyException e) {
            // A channel closed before the loop got to it: its stream must not wait for bytes never to be read.
            in.fail(new SocketException("socket closed before its answer was read"));
        }
    }

    private void failAll(Throwable e) {
        Throwable failure = e instanceof RuntimeException ? new IOException("the client's read loop failed", e) : e;
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Inbox in) {
                k.cancel();
                in.fail(failure);
            }
        }
    }
}
