package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.EngineCount;
import org.junit.jupiter.api.Test;

/** The engine's own count against the client's timing, each case (docs/search.md#held-at-once). */
class EngineCountsTest {

    private static EngineCount metrics(int running, Integer waiting, Long preemptions) {
        return new EngineCount("/metrics", 12, running, waiting, preemptions);
    }

    @Test
    void heldByTimingAndAllRunningWithoutPreemptionAgrees() {
        assertThat(EngineCounts.disagreement(metrics(4, 0, 0L), 4, true)).isEmpty();
    }

    @Test
    void requestsSeenWaitingAtOneReadAndAllRunningAtAnotherAgree() {
        assertThat(EngineCounts.disagreement(metrics(4, 2, 0L), 4, true)).isEmpty();
    }

    @Test
    void heldByTimingButFewerRunningIsAWarning() {
        assertThat(EngineCounts.disagreement(metrics(3, 0, 0L), 4, true))
                .hasValue("the engine's /metrics saw at most 3 of 4 running at once in 12 reads; the timing says"
                        + " all 4 were held at once");
    }

    @Test
    void heldByTimingButFewerRunningAndSomeWaitingSaysSo() {
        assertThat(EngineCounts.disagreement(metrics(2, 2, 0L), 4, true))
                .hasValueSatisfying(w -> assertThat(w).contains("at most 2 of 4 running at once and up to 2 waiting"));
    }

    @Test
    void heldByTimingButPreemptedIsAWarning() {
        assertThat(EngineCounts.disagreement(metrics(4, 0, 2L), 4, true))
                .hasValue("the engine's /metrics counted 2 preemptions during the probe; the timing says all 4 were"
                        + " held at once");
        assertThat(EngineCounts.disagreement(metrics(4, 0, 1L), 4, true))
                .hasValueSatisfying(w -> assertThat(w).contains("counted 1 preemption during"));
    }

    @Test
    void notHeldByTimingButAllRunningWithoutPreemptionIsAWarning() {
        assertThat(EngineCounts.disagreement(metrics(4, 0, 0L), 4, false))
                .hasValue("the engine's /metrics saw all 4 running at once and no preemption; the timing says they"
                        + " were not held at once");
    }

    @Test
    void notHeldByTimingAndFewerRunningAgrees() {
        assertThat(EngineCounts.disagreement(metrics(2, 2, 0L), 4, false)).isEmpty();
    }

    @Test
    void notHeldByTimingAndPreemptedAgrees() {
        assertThat(EngineCounts.disagreement(metrics(4, 0, 3L), 4, false)).isEmpty();
    }

    @Test
    void slotsWithoutQueueOrPreemptionsAreJudgedByRunningAlone() {
        EngineCount slots = new EngineCount("/slots", 7, 4, null, null);
        assertThat(EngineCounts.disagreement(slots, 4, true)).isEmpty();
        assertThat(EngineCounts.disagreement(slots, 4, false))
                .hasValue("the engine's /slots saw all 4 running at once; the timing says they were not held at once");
        assertThat(EngineCounts.disagreement(new EngineCount("/slots", 7, 2, null, null), 4, true))
                .hasValueSatisfying(w -> assertThat(w).startsWith("the engine's /slots saw at most 2 of 4"));
    }
}
