package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which steps ask the pass key at {@code check.depths} (docs/search.md#the-frontier-of-right-answers). */
class PasskeyFrontierTest {

    private static Point at(long target) {
        return Point.of("a", target);
    }

    @Test
    void aStepAsksWhenItServesMoreThanAnyBeforeItOfItsBackend() {
        PasskeyFrontier f = new PasskeyFrontier();
        // A search from its prediction: served, served above, then bisecting below what was served.
        assertThat(f.served(at(4096))).as("the first served step").isTrue();
        assertThat(f.served(at(32_768))).as("more than before").isTrue();
        assertThat(f.served(at(16_384))).as("below the frontier so far").isFalse();
        assertThat(f.served(at(32_768)))
                .as("the same target again (a kept server's answer)")
                .isFalse();
        assertThat(f.served(at(32_769))).isTrue();
    }

    @Test
    void eachBackendAndCellHasItsOwnFrontierAndAMapsProbeNeverAsks() {
        PasskeyFrontier f = new PasskeyFrontier();
        assertThat(f.served(at(32_768))).isTrue();
        assertThat(f.served(Point.of("b", 4096))).as("another backend").isTrue();
        assertThat(f.served(new Point("a", Map.of("ctk", "q8_0"), 4096, 1)))
                .as("another cell of the same backend")
                .isTrue();
        assertThat(f.served(new Point("a", Map.of(), 65_536, 4)))
                .as("four prompts at once: the frontier is of single prompts")
                .isFalse();
        assertThat(f.served(at(40_000)))
                .as("the map's probe did not raise the single prompts' frontier")
                .isTrue();
    }

    @Test
    void aResumedRunAsksOnlyAboveWhatItsRecordedStepsServed() {
        Scenario served = Scenario.builder("a", 16_384, 17_408, "").build();
        Scenario failed = Scenario.builder("a", 65_536, 66_560, "")
                .outcome(
                        dev.ctxprobe.results.Outcome.failed(dev.ctxprobe.results.FailureClass.KV_INSUFFICIENT),
                        "the KV cache is too small",
                        null)
                .build();
        PasskeyFrontier f = PasskeyFrontier.resumed(List.of(served, failed));
        assertThat(f.served(at(8192))).isFalse();
        assertThat(f.served(at(16_384))).isFalse();
        assertThat(f.served(at(32_768)))
                .as("a failed step served nothing: the frontier so far is 16,384")
                .isTrue();
    }

    @Test
    void theStepsOwnDepthNeedsNoRequestOfItsOwn() {
        assertThat(PasskeyFrontier.asked(List.of(0.1, 0.5, 0.9))).containsExactly(0.1, 0.9);
        assertThat(PasskeyFrontier.asked(List.of(0.5))).isEmpty();
        assertThat(PasskeyFrontier.asked(List.of(0.25, 0.75))).containsExactly(0.25, 0.75);
    }
}
