package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.SocketException;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The inbox's protocol with the test as its writer (no read loop, no socket traffic): order, stamps, the end and a
 * failure after the bytes, the pause and the resume, and what a close and an interrupt do to a waiting reader.
 */
class InboxTest {
    private final SocketChannel channel = open();
    private final List<Inbox> resumed = new ArrayList<>();
    private final AtomicInteger dropped = new AtomicInteger();
    private final Inbox inbox = new Inbox(channel, resumed::add, dropped::incrementAndGet);

    private static SocketChannel open() {
        try {
            return SocketChannel.open();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterEach
    void closeChannel() throws IOException {
        channel.close();
    }

    @Test
    void bytesComeOnceInOrderWithTheirStampsAndTheEndAfterThem() throws Exception {
        assertThat(inbox.offer(new byte[] {1, 2}, 10)).isTrue();
        assertThat(inbox.offer(new byte[] {3}, 20)).isTrue();
        inbox.end();
        byte[] b = new byte[8];

        assertThat(inbox.read(b, 0, 8)).isEqualTo(2);
        assertThat(inbox.arrivalNanos()).isEqualTo(10);
        assertThat(inbox.read(b, 2, 6)).isEqualTo(1);
        assertThat(inbox.arrivalNanos()).isEqualTo(20);
        assertThat(b).startsWith(1, 2, 3);
        assertThat(inbox.read(b, 0, 8)).isEqualTo(-1);
        assertThat(inbox.read()).isEqualTo(-1);
    }

    @Test
    void aFailureComesAfterTheBytesQueuedBeforeIt() throws Exception {
        inbox.offer(new byte[] {7}, 1);
        inbox.fail(new SocketException("reset"));

        assertThat(inbox.read()).isEqualTo(7);
        assertThatThrownBy(inbox::read).isInstanceOf(SocketException.class).hasMessage("reset");
    }

    @Test
    void aFullHeapDropsWhatIsQueuedAndFailsTheNextRead() {
        inbox.offer(new byte[] {7}, 1);
        inbox.failDropping(new OutOfMemoryError("the heap"));

        assertThatThrownBy(inbox::read).isInstanceOf(OutOfMemoryError.class);
    }

    @Test
    void aReaderFarBehindStopsTheWriterUntilItHasTakenEveryQueuedByte() throws Exception {
        int half = (int) (Inbox.PAUSE_BYTES / 2);
        assertThat(inbox.offer(new byte[half], 1)).isTrue();
        assertThat(inbox.offer(new byte[half], 2))
                .as("at the bound: stop reading")
                .isFalse();

        assertThat(inbox.readNBytes(half)).hasSize(half);
        assertThat(resumed).as("a chunk is still queued").isEmpty();
        inbox.read();
        assertThat(resumed).as("the last chunk is taken").containsExactly(inbox);
        assertThat(inbox.readNBytes(half - 1)).hasSize(half - 1);

        assertThat(inbox.offer(new byte[1], 3)).isTrue();
        inbox.read();
        assertThat(resumed).as("no resume without a pause").hasSize(1);
    }

    @Test
    void aWaitingReaderWakesWhenTheWriterPublishes() throws Exception {
        CompletableFuture<Integer> read = readOnAnotherThread();

        inbox.offer(new byte[] {42}, 5);
        inbox.publish();

        assertThat(read.get(10, TimeUnit.SECONDS)).isEqualTo(42);
        assertThat(inbox.arrivalNanos()).isEqualTo(5);
    }

    @Test
    void aCloseEndsAWaitingReadTellsTheWriterAndFailsEveryReadAfter() throws Exception {
        CompletableFuture<Integer> read = readOnAnotherThread();

        inbox.close();
        inbox.close();

        assertThatThrownBy(() -> read.get(10, TimeUnit.SECONDS))
                .rootCause()
                .isInstanceOf(SocketException.class)
                .hasMessageContaining("closed while waiting");
        assertThat(channel.isOpen()).isFalse();
        assertThat(dropped).hasValue(2);
        inbox.offer(new byte[] {1}, 1);
        assertThatThrownBy(inbox::read).isInstanceOf(SocketException.class);
    }

    @Test
    void anInterruptEndsAWaitingReadClosesTheSocketAndStaysSet() throws Exception {
        CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                inbox.read();
            } catch (IOException e) {
                failed.complete(e);
            }
            stillInterrupted.complete(Thread.currentThread().isInterrupted());
        });
        awaitParked(reader);

        reader.interrupt();

        assertThat(failed.get(10, TimeUnit.SECONDS))
                .isInstanceOf(SocketException.class)
                .hasMessageContaining("interrupt");
        assertThat(stillInterrupted.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(channel.isOpen()).isFalse();
        assertThat(dropped).hasValue(1);
    }

    /** A read of one byte on a thread of its own, returned once that thread is waiting for the writer. */
    private CompletableFuture<Integer> readOnAnotherThread() throws InterruptedException {
        CompletableFuture<Integer> read = new CompletableFuture<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                read.complete(inbox.read());
            } catch (IOException e) {
                read.completeExceptionally(e);
            }
        });
        awaitParked(reader);
        return read;
    }

    /** Waits until {@code reader} is parked in the inbox: the wait, not its length, is what the tests need. */
    private static void awaitParked(Thread reader) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (reader.getState() != Thread.State.WAITING) {
            assertThat(System.nanoTime()).as("the reader never waited").isLessThan(deadline);
            Thread.onSpinWait();
            Thread.sleep(1);
        }
    }
}
