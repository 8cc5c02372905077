package dev.ctxprobe.explore;

import static dev.ctxprobe.explore.SimulatedEngine.drive;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.Frontier;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A frontier search that starts at the predicted frontier instead of max ({@code sweep.frontier.start: plan}). */
class PlannedStartTest {
    private static final long PAD = 1024;
    private static final FrontierSettings SEEDS = new FrontierSettings(65536, 1048576, 0.01, 256, 12, PAD, 1);

    @Test
    void aRightPredictionIsProvedInTwoLaunches() {
        // Without hints the search would bisect; the prediction and one align above it settle it.
        SimulatedEngine engine = SimulatedEngine.noHint(700_000);
        List<Probe> probes = drive(new FrontierStrategy(SEEDS, 699_904L), engine);

        assertThat(probes).extracting(Probe::target).containsExactly(699_904L, 700_160L);
        Frontier f = new FrontierStrategy(SEEDS, 699_904L).answer(probes);
        assertThat(f.maxOkTarget()).isEqualTo(699_904L);
        assertThat(f.minFailedTarget()).isEqualTo(700_160L);
        assertThat(f.stoppedBecause()).isNull();
    }

    @Test
    void aRightPredictionBeatsStartingAtMaxEvenWhenTheEngineNamesItsCapacity() {
        SimulatedEngine engine = SimulatedEngine.vllmLike(1_000_000, PAD);
        long predicted = (1_000_000 - PAD) / 256 * 256;

        List<Probe> fromMax = drive(new FrontierStrategy(SEEDS), engine);
        List<Probe> fromPlan = drive(new FrontierStrategy(SEEDS, predicted), engine);

        assertThat(fromMax).hasSize(3);
        assertThat(fromPlan).extracting(Probe::target).containsExactly(predicted, predicted + 256);
        assertThat(new FrontierStrategy(SEEDS, predicted).answer(fromPlan).maxOkTarget())
                .isEqualTo(new FrontierStrategy(SEEDS).answer(fromMax).maxOkTarget());
    }

    @Test
    void aPredictionTooHighFallsBackToTheHintTheFailureGave() {
        SimulatedEngine engine = SimulatedEngine.vllmLike(500_000, PAD);
        List<Probe> probes = drive(new FrontierStrategy(SEEDS, 800_000L), engine);

        // 800,000 (a multiple of 256) fails naming 500,000: the hint's target, then one align above.
        long best = (500_000 - PAD) / 256 * 256;
        assertThat(probes).extracting(Probe::target).containsExactly(800_000L, best, best + 256);
        assertThat(new FrontierStrategy(SEEDS, 800_000L).answer(probes).maxOkTarget())
                .isEqualTo(best);
    }

    @Test
    void aPredictionTooHighWithoutAHintBisectsBelowIt() {
        SimulatedEngine engine = SimulatedEngine.noHint(300_000);
        List<Probe> probes = drive(new FrontierStrategy(SEEDS, 400_128L), engine);

        assertThat(probes.getFirst().target()).isEqualTo(400_128L);
        // Nothing passed yet: min decides, then bisection between min and the failed prediction.
        assertThat(probes.get(1).target()).isEqualTo(65_536L);
        assertThat(probes).allSatisfy(p -> assertThat(p.target()).isLessThanOrEqualTo(400_128L));
        Frontier f = new FrontierStrategy(SEEDS, 400_128L).answer(probes);
        assertThat(f.maxOkTarget()).isLessThanOrEqualTo(300_000L);
        assertThat(f.minFailedTarget()).isGreaterThan(300_000L);
    }

    @Test
    void aPredictionTooLowPassesTwiceAndTheSearchGoesOnFromMax() {
        SimulatedEngine engine = SimulatedEngine.noHint(900_000);
        List<Probe> probes = drive(new FrontierStrategy(SEEDS, 600_064L), engine);

        assertThat(probes).extracting(Probe::target).startsWith(600_064L, 600_320L, 1_048_576L);
        Frontier f = new FrontierStrategy(SEEDS, 600_064L).answer(probes);
        assertThat(f.maxOkTarget()).isLessThanOrEqualTo(900_000L).isGreaterThan(600_320L);
        assertThat(f.minFailedTarget()).isGreaterThan(900_000L);
    }

    @Test
    void aPredictionOutsideTheBoundsIsClampedToThem() {
        assertThat(new FrontierStrategy(SEEDS, 5_000_000L).firstTarget()).isEqualTo(1_048_576L);
        assertThat(new FrontierStrategy(SEEDS, 1_000L).firstTarget()).isEqualTo(65_536L);
        assertThat(new FrontierStrategy(SEEDS, 700_000L).firstTarget()).isEqualTo(699_904L);
        assertThat(new FrontierStrategy(SEEDS).firstTarget()).isEqualTo(1_048_576L);

        // At max, the prediction is the ordinary first probe: a pass there ends the search.
        List<Probe> probes = drive(new FrontierStrategy(SEEDS, 5_000_000L), SimulatedEngine.noHint(2_000_000));
        assertThat(probes).extracting(Probe::target).containsExactly(1_048_576L);
    }

    @Test
    void aCurvePassAboveThePredictionLeavesItAlone() {
        // The curve already proved more than predicted: probing the prediction would teach nothing.
        List<Probe> earlier = List.of(Probe.of(800_000, null, null, null));
        FrontierStrategy s = new FrontierStrategy(SEEDS, 600_064L);

        assertThat(s.nextTarget(earlier)).hasValue(1_048_576L);
    }

    @Test
    void aCurveFailureAboveThePredictionStillLetsItBeProbedAndProved() {
        SimulatedEngine engine = SimulatedEngine.noHint(700_000);
        FrontierStrategy s = new FrontierStrategy(SEEDS, 699_904L);
        List<Probe> probes = new java.util.ArrayList<>(List.of(engine.run(65_536), engine.run(917_504)));
        for (var next = s.nextTarget(probes); next.isPresent(); next = s.nextTarget(probes)) {
            probes.add(engine.run(next.getAsLong()));
        }

        assertThat(probes).extracting(Probe::target).containsExactly(65_536L, 917_504L, 699_904L, 700_160L);
    }
}
