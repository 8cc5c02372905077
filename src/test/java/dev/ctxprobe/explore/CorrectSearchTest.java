package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The frontier search of right answers (docs/search.md#the-frontier-of-right-answers): once the served frontier is
 * found, it bisects between the largest target answered right and the smallest answered wrong, leaving the served
 * answer as it was.
 */
class CorrectSearchTest {
    private static final FrontierSettings SETTINGS = new FrontierSettings(1024, 65536, 0.01, 256, 30, 100, 1);

    /** Serves up to {@code served}, answers right up to {@code window}: the search until it stops. */
    private static List<Probe> drive(long served, long window) {
        FrontierStrategy search = new FrontierStrategy(SETTINGS);
        List<Probe> probes = new ArrayList<>();
        OptionalLong next;
        while ((next = search.nextTarget(probes)).isPresent()) {
            long t = next.getAsLong();
            probes.add(
                    t <= served
                            ? new Probe(t, Outcome.OK, null, null, false, t <= window)
                            : Probe.of(t, FailureClass.KV_INSUFFICIENT, null, null));
        }
        return probes;
    }

    @Test
    void theRightAnswersAreBisectedToOneAlignStepBelowTheServedFrontier() {
        List<Probe> probes = drive(40_000, 12_000);
        FrontierStrategy search = new FrontierStrategy(SETTINGS);

        long correct = probes.stream()
                .filter(p -> Boolean.TRUE.equals(p.correct()))
                .mapToLong(Probe::target)
                .max()
                .orElseThrow();
        long wrong = probes.stream()
                .filter(p -> Boolean.FALSE.equals(p.correct()) && p.target() > correct)
                .mapToLong(Probe::target)
                .min()
                .orElseThrow();
        assertThat(correct).isLessThanOrEqualTo(12_000);
        assertThat(wrong).isGreaterThan(12_000);
        assertThat(wrong - correct).isLessThanOrEqualTo(256);
        // The served answer is the one the search finds without a check.
        assertThat(search.answer(probes).maxOkTarget()).isEqualTo(39_936);
        assertThat(search.answer(probes).minFailedTarget()).isEqualTo(40_192);
        assertThat(search.answer(probes).stoppedBecause()).isNull();
    }

    @Test
    void stepsNotCheckedAddNoProbe() {
        FrontierStrategy search = new FrontierStrategy(SETTINGS);
        List<Probe> probes = new ArrayList<>();
        OptionalLong next;
        while ((next = search.nextTarget(probes)).isPresent()) {
            long t = next.getAsLong();
            probes.add(
                    t <= 40_000
                            ? new Probe(t, Outcome.OK, null, null)
                            : Probe.of(t, FailureClass.KV_INSUFFICIENT, null, null));
        }
        List<Probe> checked = drive(40_000, 100_000);
        // Every answer right: nothing to bisect, the same launches as without a check.
        assertThat(checked)
                .extracting(Probe::target)
                .isEqualTo(probes.stream().map(Probe::target).toList());
    }

    @Test
    void everyAnswerWrongAddsNoProbeOnceMinWasWrong() {
        // The served search already probed min (after max failed), and it was answered wrong: nothing lies below.
        List<Probe> probes = drive(40_000, 0);
        assertThat(probes).filteredOn(p -> p.target() == 1024).singleElement().matches(p -> !p.correct());
        assertThat(probes)
                .extracting(Probe::target)
                .isEqualTo(drive(40_000, 100_000).stream().map(Probe::target).toList());
    }
}
