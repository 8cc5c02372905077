package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The shared read loop on real loopback sockets: what it stamps, what it queues, and how a read ends. */
class ReadLoopTest {

    private ServerSocketChannel listener;
    private final List<SocketChannel> open = new ArrayList<>();

    @BeforeEach
    void listen() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    @AfterEach
    void close() throws IOException {
        for (SocketChannel c : open) {
            c.close();
        }
        listener.close();
    }

    private record Pair(Inbox client, SocketChannel server) {}

    /** A connected pair whose client end the loop reads, as an exchange's after its request. */
    private Pair pair() throws IOException {
        SocketChannel client = SocketChannel.open(listener.getLocalAddress());
        SocketChannel server = listener.accept();
        open.add(client);
        open.add(server);
        client.configureBlocking(false);
        return new Pair(ReadLoop.shared().watch(client), server);
    }

    /** A read of up to four bytes on another thread. */
    private static CompletableFuture<Integer> readLater(Pair p) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return p.client().read(new byte[4], 0, 4);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }

    @Test
    void bytesAreStampedWhenTheLoopReadThemNotWhenTheStreamGetsToThem() throws Exception {
        Pair p = pair();
        long beforeWrite = System.nanoTime();
        p.server().write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        // The stream's thread comes late; the stamp must not.
        Thread.sleep(300);
        long readAt = System.nanoTime();
        byte[] b = new byte[8];

        assertThat(p.client().read(b, 0, 8)).isEqualTo(3);
        assertThat(Arrays.copyOf(b, 3)).containsExactly(1, 2, 3);
        assertThat(p.client().arrivalNanos()).isBetween(beforeWrite, readAt);
        assertThat(readAt - p.client().arrivalNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(250));
    }

    @Test
    void aReadWaitsForBytesAndTheEndOfTheStreamIsMinusOne() throws Exception {
        Pair p = pair();
        CompletableFuture<Integer> first = readLater(p);
        Thread.sleep(100);
        assertThat(first).isNotDone();

        p.server().write(ByteBuffer.wrap(new byte[] {7}));
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(1);
        p.server().close();
        assertThat(p.client().read(new byte[4], 0, 4)).isEqualTo(-1);
    }

    @Test
    void manySocketsAreReadAtOnceAndEachStreamGetsItsOwnBytes() throws Exception {
        int n = 200;
        List<Pair> pairs = new ArrayList<>();
        List<CompletableFuture<byte[]>> got = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Pair p = pair();
            pairs.add(p);
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            got.add(f);
            Thread.ofVirtual().start(() -> {
                try {
                    f.complete(p.client().readNBytes(4));
                } catch (IOException e) {
                    f.completeExceptionally(e);
                }
            });
        }
        // Two bytes per write, so that every stream waits at least twice.
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < n; i++) {
                pairs.get(i).server().write(ByteBuffer.wrap(new byte[] {(byte) i, (byte) round}));
            }
            Thread.sleep(20);
        }
        for (int i = 0; i < n; i++) {
            assertThat(got.get(i).get(10, TimeUnit.SECONDS)).containsExactly((byte) i, 0, (byte) i, 1);
        }
    }

    @Test
    void aStreamFarBehindPausesItsSocketAndGetsEveryByteInOrder() throws Exception {
        Pair p = pair();
        // Far more than the kernel buffers both ends of a loopback connection (a few MiB).
        int total = 32 << 20;
        byte[] sent = new byte[total];
        for (int i = 0; i < total; i++) {
            sent[i] = (byte) (i * 31);
        }
        CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
            try {
                ByteBuffer b = ByteBuffer.wrap(sent);
                while (b.hasRemaining()) {
                    p.server().write(b);
                }
                p.server().close();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        // Nobody reads for a while: the loop must stop at its bound and leave the rest in the socket.
        Thread.sleep(300);
        assertThat(writing)
                .as("the writer is held back once the loop stops reading")
                .isNotDone();

        assertThat(p.client().readAllBytes()).isEqualTo(sent);
        writing.get(5, TimeUnit.SECONDS);
    }

    @Test
    void closingEndsAWaitingReadAtOnce() throws Exception {
        Pair p = pair();
        CompletableFuture<Integer> read = readLater(p);
        Thread.sleep(100);
        p.client().close();

        assertThatThrownBy(() -> read.get(2, TimeUnit.SECONDS))
                .rootCause()
                .isInstanceOf(SocketException.class)
                .hasMessageContaining("closed while waiting");
    }

    @Test
    void anInterruptEndsAWaitingReadAndClosesTheSocket() throws Exception {
        Pair p = pair();
        CompletableFuture<Void> ended = new CompletableFuture<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                p.client().read(new byte[4], 0, 4);
                ended.complete(null);
            } catch (IOException e) {
                ended.completeExceptionally(e);
            }
        });
        Thread.sleep(100);
        reader.interrupt();

        assertThatThrownBy(() -> ended.get(2, TimeUnit.SECONDS)).hasCauseInstanceOf(SocketException.class);
        assertThat(open.get(open.size() - 2).isOpen()).isFalse();
    }
}
