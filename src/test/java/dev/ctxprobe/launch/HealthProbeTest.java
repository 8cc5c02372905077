package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class HealthProbeTest {

    @Test
    void aPortThatRefusesIsSaidSoWithTimeToAsk() {
        URI closed = URI.create("http://127.0.0.1:" + Ports.free() + "/health");
        HealthProbe.Answer answer = HealthProbe.probe(closed, System.nanoTime() + HealthProbe.LIMIT.toNanos());
        assertThat(answer.describe()).isEqualTo("connection refused");
        assertThat(answer.cutShort()).isFalse();
    }

    @Test
    void onlyAWaitShorterThanTheLimitIsCutShort() {
        // What a probe started with a sliver of time left gives when the sliver passes first (its result races the
        // refused connect, so it is built here rather than provoked).
        assertThat(new HealthProbe.Answer(-2, HealthProbe.LIMIT).cutShort()).isFalse();
        assertThat(new HealthProbe.Answer(-2, Duration.ofMillis(300)).cutShort())
                .isTrue();
        assertThat(new HealthProbe.Answer(503, null).cutShort()).isFalse();
    }
}
