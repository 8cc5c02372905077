package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ctxprobe.client.FakeCompletionServer.Mode;
import dev.ctxprobe.client.FakeCompletionServer.Received;
import dev.ctxprobe.client.FakeCompletionServer.Script;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class LoadRunnerIT {

    private FakeCompletionServer server;

    @BeforeEach
    void start() throws IOException {
        server = new FakeCompletionServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private LoadPlan plan(int numPrompts, int maxConcurrency, double rate, int warmup, Duration timeout) {
        return new LoadPlan(
                server.baseUrl(),
                "m",
                32,
                2,
                numPrompts,
                maxConcurrency,
                rate,
                warmup,
                TokenRange.EMBEDDED,
                timeout,
                null,
                ReadLimits.forOutput(2));
    }

    @Test
    void concurrencyCapIsHonoured() throws InterruptedException {
        server.script(Script.stream(150, 2, 5));

        LoadResult result = new LoadRunner(plan(6, 2, Double.POSITIVE_INFINITY, 0, Duration.ofSeconds(10))).run();

        assertThat(server.maxInFlight()).isEqualTo(2);
        assertThat(result.measured()).hasSize(6).allMatch(RequestRecord::ok).allMatch(RequestRecord::exactLength);
        assertThat(result.measured()).extracting(RequestRecord::index).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(result.warmup()).isEmpty();
        assertThat(result.windowEndNanos())
                .isGreaterThanOrEqualTo(result.measured().stream()
                        .mapToLong(RequestRecord::tEndNanos)
                        .max()
                        .orElseThrow());
    }

    @Test
    void infiniteRateSendsAllAtOnce() throws InterruptedException {
        server.script(Script.stream(300, 1, 0));

        LoadResult result = new LoadRunner(plan(4, 4, Double.POSITIVE_INFINITY, 0, Duration.ofSeconds(10))).run();

        assertThat(server.maxInFlight()).isEqualTo(4);
        assertThat(result.measured()).allMatch(RequestRecord::ok);
    }

    @Test
    void poissonArrivalsAreNotSentBeforeTheirTime() throws InterruptedException {
        server.script(Script.stream(0, 1, 0));
        double rate = 20;

        LoadResult result = new LoadRunner(plan(5, 5, rate, 0, Duration.ofSeconds(10))).run();

        double[] offsets = LoadRunner.arrivalOffsets(5, rate, LoadRunner.ARRIVAL_SEED);
        assertThat(offsets[4]).isPositive();
        for (RequestRecord r : result.measured()) {
            assertThat((r.tSendNanos() - result.windowStartNanos()) / 1e9)
                    .as("request %d", r.index())
                    .isGreaterThanOrEqualTo(offsets[r.index()]);
        }
    }

    @Test
    void warmupsGoFirstOneByOneWithTheirOwnPrompts() throws InterruptedException {
        server.script(Script.stream(20, 1, 0));

        LoadResult result = new LoadRunner(plan(3, 3, Double.POSITIVE_INFINITY, 2, Duration.ofSeconds(10))).run();

        assertThat(result.warmup()).hasSize(2).allMatch(RequestRecord::warmup).allMatch(RequestRecord::ok);
        assertThat(result.measured()).hasSize(3).noneMatch(RequestRecord::warmup);
        assertThat(result.warmup().get(1).tStartNanos())
                .isGreaterThanOrEqualTo(result.warmup().get(0).tEndNanos());
        assertThat(result.windowStartNanos())
                .isGreaterThanOrEqualTo(result.warmup().get(1).tEndNanos());
        List<Received> received = server.received();
        assertThat(received).hasSize(5).allSatisfy(req -> {
            assertThat(req.promptLen()).isEqualTo(32);
            assertThat(TokenRange.EMBEDDED.contains(req.minId())).isTrue();
            assertThat(TokenRange.EMBEDDED.contains(req.maxId())).isTrue();
        });
        assertThat(received.stream().map(Received::firstIds).distinct()).hasSize(5);
    }

    @Test
    void cancelStopsARunWhoseRequestsHang() throws Exception {
        server.script(Script.mode(Mode.HANG_AFTER_HEADERS));
        LoadRunner runner = new LoadRunner(plan(3, 3, Double.POSITIVE_INFINITY, 0, Duration.ofSeconds(60)));
        CompletableFuture<LoadResult> run = CompletableFuture.supplyAsync(() -> {
            try {
                return runner.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> server.inFlight() == 3);

        runner.cancel();

        // The calls would hang for 60 s; finishing well within proves they were cancelled.
        try {
            run.get(20, TimeUnit.SECONDS);
            throw new AssertionError("a cancelled run returned a result");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(IllegalStateException.class);
            assertThat(e.getCause().getCause()).isInstanceOf(InterruptedException.class);
        }
    }

    @Test
    void interruptingThePlatformThreadStopsAHangingWarmup() throws Exception {
        server.script(Script.mode(Mode.HANG_AFTER_HEADERS));
        LoadRunner runner = new LoadRunner(plan(1, 1, Double.POSITIVE_INFINITY, 1, Duration.ofSeconds(60)));
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread thread = Thread.ofPlatform().start(() -> {
            try {
                runner.run();
                outcome.complete(null);
            } catch (InterruptedException e) {
                outcome.complete(e);
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> server.inFlight() == 1);

        thread.interrupt();

        assertThat(outcome.get(20, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        thread.join();
        assertThat(server.received()).hasSize(1);
    }
}
