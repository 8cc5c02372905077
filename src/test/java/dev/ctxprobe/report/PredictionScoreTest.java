package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Frontier;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/results.md#predicted-and-measured: a prediction is scored only against what the search could reach. The
 * cases the first hour met: a 1,047,552 prediction under a search whose max was 32,000 ("full range fits"), a run
 * interrupted below its prediction, and a search that stopped early above or below it.
 */
class PredictionScoreTest {
    private static BackendPrediction predicted(long target) {
        return new BackendPrediction(
                "vllm",
                "vllm",
                target,
                Bound.MODEL_CONFIG,
                "",
                target,
                256,
                1024,
                null,
                List.of(),
                List.of(),
                List.of(),
                List.of());
    }

    private static Frontier answer(Long maxOk, Long minFailed, String stopped, long prediction) {
        return new Frontier(
                maxOk, minFailed, null, 3, null, List.of(), "per_target", "frontier", stopped, predicted(prediction));
    }

    @Test
    void aConvergedSearchIsScoredByItsDifference() {
        assertThat(Predicted.against(answer(42_496L, 42_752L, null, 42_496))).isEqualTo("exact");
        assertThat(Predicted.against(answer(13_824L, 14_080L, null, 14_080))).isEqualTo("-256");
        assertThat(Predicted.against(answer(12_544L, 12_800L, null, 12_032))).isEqualTo("+512");
        assertThat(Predicted.difference(answer(13_824L, 14_080L, null, 14_080))).isEqualTo(-256L);
    }

    @Test
    void aPredictionAboveWhatTheSearchReachedIsNotScored() {
        Frontier fullRange = answer(32_000L, null, Frontier.FULL_RANGE_FITS, 1_047_552);

        assertThat(Predicted.against(fullRange)).isEqualTo("not reached: full range fits");
        assertThat(Predicted.difference(fullRange)).isNull();
        assertThat(Predicted.note(fullRange)).doesNotContain("-1,015,552").endsWith("not reached: full range fits");
        assertThat(Predicted.against(answer(16_384L, null, Frontier.INTERRUPTED, 42_496)))
                .isEqualTo("not reached: interrupted");
        assertThat(Predicted.against(answer(16_384L, 65_536L, Frontier.MAX_LAUNCHES, 42_496)))
                .isEqualTo("not reached: max_launches");
    }

    @Test
    void aSearchThatStoppedEarlyGivesOnlyTheBoundItProved() {
        Frontier passedAbove = answer(65_536L, null, Frontier.FULL_RANGE_FITS, 42_496);
        Frontier failedAtOrBelow = answer(16_384L, 32_768L, Frontier.INTERRUPTED, 42_496);

        assertThat(Predicted.against(passedAbove)).isEqualTo("+23,040 or more");
        assertThat(Predicted.difference(passedAbove)).isNull();
        assertThat(Predicted.against(failedAtOrBelow)).isEqualTo("too high: 32,768 failed");
        assertThat(Predicted.difference(failedAtOrBelow)).isNull();
    }

    @Test
    void textAndMarkdownSayNotReachedInsteadOfADifference() throws Exception {
        var doc = ReportFixtures.sample().document();
        Frontier vllm = doc.frontier().get("vllm");
        doc = doc.withFrontier(
                "vllm",
                new Frontier(
                                vllm.maxOkTarget(),
                                null,
                                null,
                                vllm.launches(),
                                null,
                                List.of(),
                                vllm.mode(),
                                vllm.strategy(),
                                Frontier.FULL_RANGE_FITS,
                                null)
                        .withPredicted(predicted(1_047_552)));
        List<ReportInput> inputs = List.of(new ReportInput("results.json", doc));

        String text = Reports.render(inputs, Format.TEXT);
        assertThat(text).contains("predicted 1,047,552 (the model config): not reached: full range fits");
        assertThat(text).doesNotContain("-1,035,520");
        assertThat(Reports.render(inputs, Format.MD)).contains("| not reached: full range fits |");
    }
}
