package dev.ctxprobe.results;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class FrontierTest {

    private static Frontier.Attempt pass(long target) {
        return new Frontier.Attempt(target, Outcome.OK);
    }

    private static Frontier.Attempt fail(long target) {
        return new Frontier.Attempt(target, Outcome.failed(FailureClass.KV_INSUFFICIENT));
    }

    @Test
    void summarisesTheBracketFromAttemptsOnly() {
        List<Frontier.Attempt> attempts =
                List.of(fail(1048576), pass(65536), pass(557056), fail(1_001_216), pass(998_912));

        Frontier f = Frontier.of(attempts);

        assertThat(f.maxOkTarget()).isEqualTo(998_912L);
        assertThat(f.minFailedTarget()).isEqualTo(1_001_216L);
        assertThat(f.bracketRatio()).isCloseTo((1_001_216 - 998_912) / 998_912.0, Offset.offset(1e-12));
        assertThat(f.launches()).isEqualTo(5);
        assertThat(f.nonMonotonic()).isEmpty();
        assertThat(f.stoppedBecause()).isNull();
    }

    @Test
    void failuresBelowAPassAreListedAndTheNextFailureIsTheSmallestAbove() {
        Frontier f = Frontier.of(List.of(pass(20480), fail(29696), pass(35840), fail(29696), fail(65536), fail(50000)));

        assertThat(f.maxOkTarget()).isEqualTo(35840L);
        assertThat(f.minFailedTarget()).isEqualTo(50000L);
        assertThat(f.nonMonotonic()).containsExactly(29696L);
    }

    @Test
    void saysWhenEverythingOrNothingFitsAndWhatStoppedIt() {
        assertThat(Frontier.of(List.of(pass(1048576))).stoppedBecause()).isEqualTo(Frontier.FULL_RANGE_FITS);
        Frontier none = Frontier.of(List.of(fail(1048576), fail(65536)));
        assertThat(none.stoppedBecause()).isEqualTo(Frontier.NOTHING_FITS);
        assertThat(none.minFailedTarget()).isEqualTo(65536L);
        assertThat(none.bracketRatio()).isNull();
        Frontier busy = Frontier.of(List.of(
                fail(1048576), pass(65536), new Frontier.Attempt(557056, Outcome.failed(FailureClass.GPU_BUSY))));
        assertThat(busy.stoppedBecause()).isEqualTo("gpu_busy");
        assertThat(busy.minFailedTarget()).isEqualTo(1048576L);
        Frontier empty = Frontier.of(List.of());
        assertThat(empty.maxOkTarget()).isNull();
        assertThat(empty.stoppedBecause()).isNull();
        assertThat(empty.launches()).isZero();
    }

    @Test
    void aSeedsUnclassifiedFailureBoundsTheLengthAndSkippedStepsAreNotLaunches() {
        Scenario ok = Scenario.builder("vllm", 917_504, 918_528, "vllm serve").build();
        Scenario failed = Scenario.builder("vllm", 1_048_576, 1_049_600, "vllm serve")
                .outcome(Outcome.UNCLASSIFIED, "server failed to start", null)
                .build();
        Scenario skipped = Scenario.builder("vllm", 2_097_152, 2_098_176, "vllm serve")
                .outcome(Outcome.SKIPPED, "skipped", null)
                .build();

        Frontier f = Frontier.ofSteps(List.of(ok, failed, skipped));

        assertThat(f.maxOkTarget()).isEqualTo(917_504L);
        assertThat(f.minFailedTarget()).isEqualTo(1_048_576L);
        assertThat(f.launches()).isEqualTo(2);
    }

    @Test
    void launchesCanBeCountedSeparatelyFromAttempts() {
        Frontier f = Frontier.of(List.of(fail(1048576), pass(65536), pass(500_000)));

        Frontier relaunched = f.withLaunches(1);

        assertThat(relaunched.launches()).isEqualTo(1);
        assertThat(relaunched)
                .usingRecursiveComparison()
                .ignoringFields("launches")
                .isEqualTo(f);
    }

    @Test
    void anOutcomeCarriesTheSearchPolicy() {
        assertThat(Outcome.of("kv_insufficient").boundsLength()).isTrue();
        assertThat(Outcome.of("kv_insufficient").worthRetryBelow()).isTrue();
        assertThat(Outcome.of("port_busy").endsSearch()).isTrue();
        assertThat(Outcome.of("timeout").replacesKeptServer()).isTrue();
        assertThat(Outcome.of("request_rejected").replacesKeptServer()).isFalse();
        assertThat(Outcome.of("interrupted").interrupted()).isTrue();
        assertThat(Outcome.of("failed")).isEqualTo(Outcome.UNCLASSIFIED);
        assertThat(Outcome.of("skipped").launched()).isFalse();
        assertThat(Outcome.OK.passed()).isTrue();
        for (FailureClass c : FailureClass.values()) {
            assertThat(Outcome.of(c.id()).failureClass()).isEqualTo(c);
        }
    }

    @Test
    void aClusterThatKeptOrEndedAJobNeverMakesNothingFit() {
        for (FailureClass c :
                List.of(FailureClass.QUEUE_TIMEOUT, FailureClass.CLUSTER_ENDED, FailureClass.SUBMIT_REJECTED)) {
            Outcome o = Outcome.failed(c);
            assertThat(o.boundsLength()).as(c.id()).isFalse();
            assertThat(o.endsSearch()).as(c.id()).isTrue();
            Frontier f = Frontier.of(List.of(fail(65536), new Frontier.Attempt(4096, o)));
            assertThat(f.stoppedBecause()).isEqualTo(c.id());
            assertThat(f.minFailedTarget()).isEqualTo(65536L);
        }
        // The out-of-memory kill a cluster reports is oom_startup: that one does bound length.
        assertThat(Outcome.failed(FailureClass.OOM_STARTUP).boundsLength()).isTrue();
    }
}
