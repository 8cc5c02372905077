package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The answer a strategy gives: the frontier of its probes with the best capacity hint as the prediction. */
class HintsTest {

    @Test
    void aModelLengthHintPredictsHintMinusThePad() {
        List<Probe> probes = List.of(
                Probe.of(1048576, FailureClass.KV_INSUFFICIENT, 1_000_000L, HintKind.MAX_MODEL_LEN),
                Probe.of(998_912, null, null, null));

        assertThat(Strategy.hinted(probes, 1024, 1).predictedMax()).isEqualTo(998_976L);
    }

    @Test
    void aPromptLimitHintPredictsHintMinusTheAllowanceAndTheLatestHintWins() {
        List<Probe> probes = List.of(
                Probe.of(1048576, FailureClass.KV_INSUFFICIENT, 900_000L, HintKind.MAX_MODEL_LEN),
                Probe.of(800_000, FailureClass.REQUEST_REJECTED, 700_001L, HintKind.PROMPT_LEN));

        assertThat(Strategy.hinted(probes, 1024, 1).predictedMax()).isEqualTo(700_000L);
        assertThat(Strategy.hinted(probes, 1024, 3).predictedMax()).isEqualTo(699_998L);
    }
}
