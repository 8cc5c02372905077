package dev.ctxprobe.explore;

import static dev.ctxprobe.explore.SimulatedEngine.drive;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.results.FailureClass;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ListStrategyTest {

    private static final List<Long> TARGETS = List.of(65536L, 131072L, 262144L, 393216L, 524288L);

    @Test
    void probesEveryTargetInOrderWhenFailuresDoNotStopIt() {
        List<Probe> probes = drive(new ListStrategy(TARGETS, false), SimulatedEngine.noHint(200_000));

        assertThat(probes).extracting(Probe::target).containsExactlyElementsOf(TARGETS);
        assertThat(probes).extracting(Probe::passed).containsExactly(true, true, false, false, false);
        assertThat(new ListStrategy(TARGETS, false).skipped(probes)).isEmpty();
    }

    @Test
    void stopAfterFailureSkipsTheRestOfTheBackend() {
        ListStrategy strategy = new ListStrategy(TARGETS, true);

        List<Probe> probes = drive(strategy, SimulatedEngine.noHint(200_000));

        assertThat(probes).extracting(Probe::target).containsExactly(65536L, 131072L, 262144L);
        assertThat(strategy.skipped(probes).stream().map(dev.ctxprobe.results.Point::target))
                .containsExactly(393216L, 524288L);
    }

    @Test
    void aFailureThatSaysNothingAboutLengthStopsEvenWithoutStopAfterFailure() {
        ListStrategy strategy = new ListStrategy(TARGETS, false);

        List<Probe> probes = drive(strategy, SimulatedEngine.portBusyAt(2, SimulatedEngine.noHint(10_000_000)));

        assertThat(probes).extracting(p -> p.outcome().failureClass()).containsExactly(null, FailureClass.PORT_BUSY);
        assertThat(strategy.skipped(probes).stream().map(dev.ctxprobe.results.Point::target))
                .containsExactly(262144L, 393216L, 524288L);
    }

    @Test
    void nothingIsSkippedWhileTheListIsStillGoing() {
        ListStrategy strategy = new ListStrategy(TARGETS, true);
        List<Probe> probes = List.of(Probe.of(65536, null, null, null));

        assertThat(strategy.skipped(probes).stream().map(dev.ctxprobe.results.Point::target))
                .isEmpty();
        assertThat(strategy.nextTarget(probes)).hasValue(131072L);
    }

    @Test
    void repeatedTargetsAreProbedAsOftenAsListed() {
        ListStrategy strategy = new ListStrategy(List.of(1024L, 1024L), false);
        Probe first = Probe.of(1024, null, null, null);

        assertThat(strategy.nextTarget(List.of())).hasValue(1024L);
        assertThat(strategy.nextTarget(List.of(first))).hasValue(1024L);
        assertThat(strategy.nextTarget(List.of(first, first))).isEmpty();
    }

    @Test
    void probesOfAnotherListAreRefusedWithWhatDiffers() {
        ListStrategy strategy = new ListStrategy(TARGETS, false);
        List<Probe> wrong = new ArrayList<>(List.of(Probe.of(65536, null, null, null)));
        wrong.add(Probe.of(100_000, null, null, null));

        assertThatThrownBy(() -> strategy.nextTarget(wrong))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("probe 2 has target 100000 but the list's target 2 is 131072");
    }

    @Test
    void anEmptyOrNonPositiveListIsRejected() {
        assertThatThrownBy(() -> new ListStrategy(List.of(), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one target");
        assertThatThrownBy(() -> new ListStrategy(List.of(65536L, 0L), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("list target 0 is not a positive number of tokens");
        assertThatThrownBy(() -> new ListStrategy(Arrays.asList(65536L, null), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("list target null");
    }
}
