package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.ServedCapacity;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Issue 25: "held at once" from the times of the tokens alone (docs/search.md#held-at-once): requests generated
 * together pass; one whose first token came after another finished was queued; one that paused for about a prefill
 * after all had begun was preempted; a server stating fewer slots than requests is named.
 */
class HeldAtOnceTest {
    private static final long MS = 1_000_000;

    /** A served request sent at 0, its first token at {@code firstMs}, then tokens {@code gapsMs} apart. */
    private static RequestRecord served(int index, double firstMs, double... gapsMs) {
        List<Double> itl = new ArrayList<>();
        double last = firstMs;
        for (double g : gapsMs) {
            itl.add(g);
            last += g;
        }
        return new RequestRecord(
                index,
                false,
                1024,
                200,
                RequestOutcome.OK,
                1024,
                itl.size() + 1,
                "length",
                itl.size() + 1,
                true,
                0,
                0L,
                (long) (firstMs * MS),
                (long) (last * MS),
                (long) (last * MS),
                1.0,
                firstMs,
                last,
                null,
                itl,
                null,
                100,
                null,
                null);
    }

    @Test
    void requestsGeneratedTogetherAreHeldAtOnce() {
        List<RequestRecord> two = List.of(served(0, 100, 5, 5, 5, 5), served(1, 115, 5, 5, 5, 5));
        assertThat(HeldAtOnce.judge(two, null, true)).isEmpty();
    }

    @Test
    void aFirstTokenAfterAnotherFinishedWasQueued() {
        List<RequestRecord> two = List.of(served(0, 100, 5, 5, 5), served(1, 200, 5, 5, 5));
        Optional<StepFailure> f = HeldAtOnce.judge(two, null, true);
        assertThat(f).isPresent();
        assertThat(f.get().failureClass()).isEqualTo(FailureClass.NOT_CONCURRENT);
        assertThat(f.get().detail()).contains("queued").contains("1 of them").doesNotContain("slots");
        assertThat(f.get().evidence()).hasSize(2).allMatch(line -> line.contains("first token at"));
    }

    @Test
    void aPauseWhileTheOthersWentOnWasAPreemption() {
        List<RequestRecord> two = List.of(served(0, 100, 5, 5, 5, 5, 5, 5), served(1, 105, 5, 90, 5, 5));
        Optional<StepFailure> f = HeldAtOnce.judge(two, null, true);
        assertThat(f).isPresent();
        assertThat(f.get().detail()).contains("preempted").contains("request 1 paused 90 ms");
    }

    @Test
    void aPauseOfAllTogetherIsTheMachineNotAPreemption() {
        // Both stall 90 ms at the same moment (a loaded CPU, a prompt batch): neither went on without the other.
        List<RequestRecord> two = List.of(served(0, 100, 5, 90, 5, 5), served(1, 101, 5, 90, 5, 5));
        assertThat(HeldAtOnce.judge(two, null, true)).isEmpty();
    }

    @Test
    void anEngineThatNeverPreemptsPausesForAnotherSlotsPromptBatch() {
        List<RequestRecord> two = List.of(served(0, 100, 5, 5, 5, 5, 5, 5), served(1, 105, 5, 90, 5, 5));
        assertThat(HeldAtOnce.judge(two, null, false)).isEmpty();
    }

    @Test
    void aSlowDecodeStepIsNoPreemption() {
        // 12 ms where tokens come 5 ms apart: a busy step, not a prefill done again.
        List<RequestRecord> two = List.of(served(0, 100, 5, 5, 12, 5), served(1, 105, 5, 5, 5, 5));
        assertThat(HeldAtOnce.judge(two, null, true)).isEmpty();
    }

    @Test
    void fewerSlotsThanRequestsAreNamed() {
        ServedCapacity twoSlots =
                new ServedCapacity(8192L, null, null, 2, true, null, null, null, null, null, List.of("props"));
        List<RequestRecord> four =
                List.of(served(0, 100, 5, 5), served(1, 100, 5, 5), served(2, 300, 5, 5), served(3, 300, 5, 5));
        Optional<StepFailure> f = HeldAtOnce.judge(four, twoSlots, false);
        assertThat(f).isPresent();
        assertThat(f.get().detail()).contains("queued").contains("more requests than slots (4 sent, the server has 2)");
    }

    @Test
    void fewerSlotsThanRequestsAreNotHeldEvenWhenTheTimesBlurIt() {
        ServedCapacity twoSlots =
                new ServedCapacity(8192L, null, null, 2, true, null, null, null, null, null, List.of("props"));
        List<RequestRecord> four =
                List.of(served(0, 100, 5, 5), served(1, 100, 5, 5), served(2, 101, 5, 5), served(3, 101, 5, 5));
        Optional<StepFailure> f = HeldAtOnce.judge(four, twoSlots, false);
        assertThat(f).isPresent();
        assertThat(f.get().detail())
                .contains("more requests than slots (4 sent, the server has 2)")
                .contains("times alone did not show it");
    }

    @Test
    void fewerRunningRequestsThanSentAreNamedAsSglangStatesThem() {
        ServedCapacity runsTwo = new ServedCapacity(
                8192L, null, 20_000L, null, null, null, null, null, null, null, null, 2, List.of("log"));
        List<RequestRecord> four =
                List.of(served(0, 100, 5, 5), served(1, 100, 5, 5), served(2, 101, 5, 5), served(3, 101, 5, 5));
        Optional<StepFailure> f = HeldAtOnce.judge(four, runsTwo, true);
        assertThat(f).isPresent();
        assertThat(f.get().detail()).contains("more requests than max_running_requests (4 sent, the server runs 2)");
    }
}
