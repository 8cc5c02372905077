package dev.ctxprobe.explore;

import static dev.ctxprobe.explore.SimulatedEngine.drive;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.HintKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class FrontierStrategyTest {

    private static final long PAD = 1024;
    /** The seeds' range with the defaults of docs/experiment-file.md. */
    private static final FrontierSettings SEEDS = new FrontierSettings(65536, 1048576, 0.01, 256, 12, PAD, 1);

    private static final List<Long> SEED_TARGETS =
            List.of(65536L, 131072L, 262144L, 393216L, 524288L, 655360L, 786432L, 917504L, 1048576L);

    @Test
    void vllmHintGivesABracketOfOneAlignStepInThreeLaunches() {
        List<Probe> probes = drive(new FrontierStrategy(SEEDS), SimulatedEngine.vllmLike(1_000_000, PAD));

        assertThat(probes).extracting(Probe::target).containsExactly(1048576L, 998912L, 999168L);
        Frontier f = new FrontierStrategy(SEEDS).answer(probes);
        assertThat(f.maxOkTarget()).isEqualTo(998912L);
        assertThat(f.minFailedTarget()).isEqualTo(999168L);
        assertThat(f.predictedMax()).isEqualTo(1_000_000 - PAD);
        assertThat(f.stoppedBecause()).isNull();
        assertThat(f.launches()).isEqualTo(3);
    }

    @Test
    void withinAStatedLimitTheSearchStartsAtItAndAPassThereIsTheAnswer() {
        // An openai endpoint stated max_model_len 300,001: prompts of up to 300,000 tokens (docs/engines.md, openai).
        Strategy search = new FrontierStrategy(SEEDS).within(300_000);
        List<Probe> probes = new ArrayList<>();

        assertThat(search.largestTarget()).isEqualTo(299_776L);
        assertThat(search.nextTarget(probes)).hasValue(299_776L);
        probes.add(new Probe(299_776L, dev.ctxprobe.results.Outcome.OK, 300_001L, HintKind.MAX_MODEL_LEN));
        assertThat(search.nextTarget(probes)).isEmpty();
        Frontier f = search.answer(probes);
        assertThat(f.maxOkTarget()).isEqualTo(299_776L);
        assertThat(f.minFailedTarget()).isNull();
        assertThat(f.stoppedBecause()).isNull();
        // The same pass without a stated limit is a range that fits, and the search goes on above it.
        assertThat(new FrontierStrategy(SEEDS).nextTarget(probes)).isPresent();
    }

    @Test
    void withinAStatedLimitAFailureAtItIsSearchedBelowNeverAbove() {
        Strategy search = new FrontierStrategy(SEEDS).within(300_000);
        List<Probe> probes = drive(search, SimulatedEngine.vllmLike(200_000, PAD));

        assertThat(probes).extracting(Probe::target).first().isEqualTo(299_776L);
        assertThat(probes).allSatisfy(p -> assertThat(p.target()).isLessThanOrEqualTo(300_000L));
        assertThat(search.answer(probes).maxOkTarget()).isEqualTo(SEEDS.alignDown(200_000 - PAD));
    }

    @Test
    void aStatedLimitAboveMaxOrBelowMinLeavesTheSearchAsGiven() {
        FrontierStrategy search = new FrontierStrategy(SEEDS);

        assertThat(search.within(2_000_000)).isSameAs(search);
        assertThat(search.within(SEEDS.max())).isSameAs(search);
        assertThat(search.within(65_000)).isSameAs(search);
    }

    @Test
    void aServerThatSizedItselfIsCheckedOneAlignAboveAtOnce() {
        // vLLM's --max-model-len auto fitted 1,000,000; the first step was measured at the target that allows.
        long fitted = 1_000_000;
        long measured = SEEDS.alignDown(fitted - PAD);
        List<Probe> probes = new ArrayList<>(
                List.of(new Probe(measured, dev.ctxprobe.results.Outcome.OK, fitted, HintKind.MAX_MODEL_LEN)));
        FrontierStrategy search = new FrontierStrategy(SEEDS);

        assertThat(search.nextTarget(probes)).hasValue(measured + 256);
        probes.add(Probe.of(measured + 256, FailureClass.KV_INSUFFICIENT, fitted, HintKind.MAX_MODEL_LEN));
        assertThat(search.nextTarget(probes)).isEmpty();
        Frontier f = search.answer(probes);
        assertThat(f.maxOkTarget()).isEqualTo(measured);
        assertThat(f.minFailedTarget() - f.maxOkTarget()).isLessThanOrEqualTo((long) (0.01 * measured));
    }

    @Test
    void aHangAtTheStatedCapacityIsCheckedOneAlignBelowInsteadOfBisected() {
        FrontierStrategy search = new FrontierStrategy(SEEDS);
        List<Probe> probes = new ArrayList<>(List.of(new Probe(
                SEEDS.highestTarget(), dev.ctxprobe.results.Outcome.failed(FailureClass.TIMEOUT), null, null, true)));

        assertThat(search.nextTarget(probes)).hasValue(SEEDS.highestTarget() - 256);
        probes.add(Probe.of(SEEDS.highestTarget() - 256, null, null, null));
        assertThat(search.nextTarget(probes)).isEmpty();
        // A plain timeout says nothing of where the limit is: the search bisects from min as before.
        List<Probe> plain = List.of(Probe.of(SEEDS.highestTarget(), FailureClass.TIMEOUT, null, null));
        assertThat(search.nextTarget(plain)).hasValue(SEEDS.lowestTarget());
    }

    @Test
    void sglangHintLimitsThePromptSoTheCandidateIsHintMinusTheAllowance() {
        List<Probe> probes = drive(new FrontierStrategy(SEEDS), SimulatedEngine.sglangLike(700_001));

        // 700,001 - 1 = 700,000, aligned down to 699,904; the pad plays no part for a prompt limit.
        assertThat(probes).extracting(Probe::target).containsExactly(1048576L, 699904L, 700160L);
        assertThat(probes).extracting(Probe::passed).containsExactly(false, true, false);
    }

    @Test
    void withAHintEveryCapacityTakesAtMostThreeLaunches() {
        for (long capacity = 30_000; capacity < 1_100_000; capacity += 3_989) {
            for (SimulatedEngine engine :
                    List.of(SimulatedEngine.vllmLike(capacity, PAD), SimulatedEngine.sglangLike(capacity))) {
                List<Probe> probes = drive(new FrontierStrategy(SEEDS), engine);
                Frontier f = assertSound(SEEDS, probes, engine);

                assertThat(probes).as("capacity %d: %s", capacity, probes).hasSizeLessThanOrEqualTo(3);
                if (f.maxOkTarget() != null && f.minFailedTarget() != null) {
                    long gap = f.minFailedTarget() - f.maxOkTarget();
                    // Only when the hint lands within precision of max does the search stop before one align step.
                    assertThat(gap == SEEDS.align() || f.minFailedTarget() == SEEDS.highestTarget())
                            .as("capacity %d: %s", capacity, probes)
                            .isTrue();
                }
            }
        }
    }

    @Test
    void withoutAHintBisectionStaysWithinTheLogarithmicBound() {
        List<FrontierSettings> settings = List.of(
                SEEDS,
                new FrontierSettings(4096, 131072, 0.01, 256, 30, PAD, 1),
                new FrontierSettings(1000, 50000, 0.05, 64, 30, 0, 1),
                new FrontierSettings(65536, 1048576, 0.001, 256, 30, PAD, 1));
        for (FrontierSettings s : settings) {
            long range = s.highestTarget() - s.lowestTarget();
            long bound = 2 + (long) Math.ceil(Math.log(range / (s.precision() * s.lowestTarget())) / Math.log(2));
            long step = Math.max(1, (s.highestTarget() - s.lowestTarget()) / 400);
            for (long capacity = s.lowestTarget() - 7; capacity <= s.highestTarget() + 300; capacity += step) {
                SimulatedEngine engine = SimulatedEngine.noHint(capacity);
                List<Probe> probes = drive(new FrontierStrategy(s), engine);
                Frontier f = assertSound(s, probes, engine);

                assertThat((long) probes.size())
                        .as("%s capacity %d: %s", s, capacity, probes)
                        .isLessThanOrEqualTo(Math.min(bound, s.maxLaunches()));
                if (probes.size() < s.maxLaunches()) {
                    assertWithinPrecision(s, f, trueMax(s, engine));
                }
            }
        }
    }

    @Test
    void aCapacityOffTheAlignGridIsFoundToTheAlignedTargetBelowIt() {
        FrontierSettings exact = new FrontierSettings(65536, 1048576, 1e-9, 256, 30, PAD, 1);
        SimulatedEngine engine = SimulatedEngine.noHint(500_001);

        Frontier f = new FrontierStrategy(exact).answer(drive(new FrontierStrategy(exact), engine));

        assertThat(f.maxOkTarget()).isEqualTo(499_968L);
        assertThat(f.minFailedTarget()).isEqualTo(500_224L);
    }

    @Test
    void whenMaxPassesTheFullRangeFitsAfterOneLaunch() {
        List<Probe> probes = drive(new FrontierStrategy(SEEDS), SimulatedEngine.vllmLike(4_000_000, PAD));

        assertThat(probes).extracting(Probe::target).containsExactly(1048576L);
        Frontier f = new FrontierStrategy(SEEDS).answer(probes);
        assertThat(f.maxOkTarget()).isEqualTo(1048576L);
        assertThat(f.stoppedBecause()).isEqualTo(Frontier.FULL_RANGE_FITS);
    }

    @Test
    void whenMinFailsNothingFitsAfterTwoLaunchesEvenIfAHintPointsBelowMin() {
        for (SimulatedEngine engine : List.of(SimulatedEngine.noHint(50_000), SimulatedEngine.vllmLike(50_000, PAD))) {
            List<Probe> probes = drive(new FrontierStrategy(SEEDS), engine);

            assertThat(probes).extracting(Probe::target).containsExactly(1048576L, 65536L);
            Frontier f = new FrontierStrategy(SEEDS).answer(probes);
            assertThat(f.maxOkTarget()).isNull();
            assertThat(f.minFailedTarget()).isEqualTo(65536L);
            assertThat(f.stoppedBecause()).isEqualTo(Frontier.NOTHING_FITS);
        }
    }

    @Test
    void aHintThatPromisesTooMuchIsProbedOnceThenBisectionTakesOver() {
        long capacity = 600_000;
        SimulatedEngine optimistic = target -> target > capacity
                ? Probe.of(target, FailureClass.KV_INSUFFICIENT, 700_000L, HintKind.MAX_MODEL_LEN)
                : Probe.of(target, null, null, null);

        List<Probe> probes = drive(new FrontierStrategy(SEEDS), optimistic);

        assertThat(probes.subList(0, 3)).extracting(Probe::target).containsExactly(1048576L, 698_880L, 65536L);
        assertWithinPrecision(SEEDS, assertSound(SEEDS, probes, optimistic), trueMax(SEEDS, optimistic));
    }

    @Test
    void aHintThatPromisesTooLittleIsPassedThenBisectionContinuesAboveIt() {
        long capacity = 600_000;
        SimulatedEngine pessimistic = target -> target > capacity
                ? Probe.of(target, FailureClass.KV_INSUFFICIENT, 400_000L + PAD, HintKind.MAX_MODEL_LEN)
                : Probe.of(target, null, null, null);

        List<Probe> probes = drive(new FrontierStrategy(SEEDS), pessimistic);

        assertThat(probes.subList(0, 3)).extracting(Probe::target).containsExactly(1048576L, 399_872L, 400_128L);
        Frontier f = assertSound(SEEDS, probes, pessimistic);
        assertWithinPrecision(SEEDS, f, trueMax(SEEDS, pessimistic));
        assertThat(f.maxOkTarget()).isGreaterThan(590_000L);
    }

    @Test
    void aHintOnAPassingProbeIsFollowedToo() {
        // vLLM logs its KV capacity on a successful start as well.
        SimulatedEngine engine = target -> target + PAD > 300_000
                ? Probe.of(target, FailureClass.KV_INSUFFICIENT, null, null)
                : Probe.of(target, null, 300_000L, HintKind.MAX_MODEL_LEN);

        List<Probe> probes = drive(new FrontierStrategy(SEEDS), engine);

        assertThat(probes).extracting(Probe::target).containsExactly(1048576L, 65536L, 298_752L, 299_008L);
    }

    @Test
    void bisectionReportsTheFailureItMetFirstAndNeverClaimsTheLengthsAboveIt() {
        // vLLM issue 10517: 20k, 35k and 45k start, 29k does not. The first midpoint lands in the hole.
        FrontierSettings s = new FrontierSettings(8192, 49152, 0.01, 256, 12, PAD, 1);
        SimulatedEngine engine = SimulatedEngine.failing(t -> (t >= 28672 && t < 30720) || t > 46080);

        List<Probe> probes = drive(new FrontierStrategy(s), engine);
        Frontier f = assertSound(s, probes, engine);

        assertThat(probes).extracting(Probe::target).contains(28672L).doesNotContain(35840L, 46080L);
        assertThat(f.minFailedTarget()).isEqualTo(28672L);
        assertThat(f.bracketRatio()).isLessThanOrEqualTo(0.01);
        assertThat(f.nonMonotonic()).isEmpty();
    }

    @Test
    void resumedFromNonMonotonicProbesTheSearchGoesOnAboveTheLargestPassAndListsTheHole() {
        FrontierSettings s = new FrontierSettings(16384, 65536, 0.01, 256, 12, PAD, 1);
        SimulatedEngine engine = SimulatedEngine.failing(t -> (t >= 28672 && t < 30720) || t > 46080);
        List<Probe> probes = new ArrayList<>(List.of(engine.run(20480), engine.run(29696), engine.run(35840)));
        FrontierStrategy strategy = new FrontierStrategy(s);

        for (OptionalLong next = strategy.nextTarget(probes); next.isPresent(); next = strategy.nextTarget(probes)) {
            assertThat(next.getAsLong()).isGreaterThan(35840L);
            probes.add(engine.run(next.getAsLong()));
        }
        Frontier f = strategy.answer(probes);

        assertThat(probes.get(3).target()).isEqualTo(65536L);
        assertThat(f.nonMonotonic()).containsExactly(29696L);
        assertThat(f.maxOkTarget()).isBetween(46080L - 461, 46080L);
        assertThat(f.minFailedTarget()).isGreaterThan(46080L);
    }

    @ParameterizedTest
    @EnumSource(
            value = FailureClass.class,
            names = {"PORT_BUSY", "GPU_BUSY", "CLIENT_ERROR", "INTERRUPTED"})
    void aFailureThatSaysNothingAboutLengthStopsTheSearch(FailureClass cause) {
        SimulatedEngine engine = SimulatedEngine.vllmLike(500_000, PAD);
        List<Probe> probes = new ArrayList<>(List.of(engine.run(1048576)));
        FrontierStrategy strategy = new FrontierStrategy(SEEDS);
        long hinted = strategy.nextTarget(probes).orElseThrow();
        probes.add(Probe.of(hinted, cause, null, null));

        assertThat(strategy.nextTarget(probes)).isEmpty();
        Frontier f = strategy.answer(probes);
        assertThat(f.stoppedBecause()).isEqualTo(cause.id());
        assertThat(f.maxOkTarget()).isNull();
        assertThat(f.minFailedTarget()).isEqualTo(1048576L);
    }

    @Test
    void aPortBusyOnTheFirstLaunchLeavesNoAnswer() {
        SimulatedEngine engine = SimulatedEngine.portBusyAt(1, SimulatedEngine.noHint(500_000));

        List<Probe> probes = drive(new FrontierStrategy(SEEDS), engine);

        assertThat(probes).hasSize(1);
        Frontier f = new FrontierStrategy(SEEDS).answer(probes);
        assertThat(f.maxOkTarget()).isNull();
        assertThat(f.minFailedTarget()).isNull();
        assertThat(f.stoppedBecause()).isEqualTo("port_busy");
    }

    @Test
    void theLaunchBudgetIsNeverExceededAndTheSummarySaysItRanOut() {
        FrontierSettings four = new FrontierSettings(65536, 1048576, 0.01, 256, 4, PAD, 1);
        SimulatedEngine engine = SimulatedEngine.noHint(500_000);

        List<Probe> probes = drive(new FrontierStrategy(four), engine);

        assertThat(probes).hasSize(4);
        Frontier f = assertSound(four, probes, engine);
        assertThat(f.stoppedBecause()).isEqualTo(Frontier.MAX_LAUNCHES);
    }

    @Test
    void withOneLaunchOnlyMaxIsProbed() {
        FrontierSettings one = new FrontierSettings(65536, 1048576, 0.01, 256, 1, PAD, 1);

        List<Probe> probes = drive(new FrontierStrategy(one), SimulatedEngine.noHint(500_000));

        assertThat(probes).extracting(Probe::target).containsExactly(1048576L);
        assertThat(new FrontierStrategy(one).answer(probes).stoppedBecause()).isEqualTo(Frontier.MAX_LAUNCHES);
    }

    @Test
    void whileTheSearchRunsTheSummaryClaimsNoReasonToStop() {
        List<Probe> probes = List.of(SimulatedEngine.noHint(500_000).run(1048576));

        Frontier f = new FrontierStrategy(SEEDS).answer(probes);

        assertThat(f.stoppedBecause()).isNull();
        assertThat(Strategy.hinted(probes, PAD, 1).stoppedBecause()).isEqualTo(Frontier.NOTHING_FITS);
    }

    @Test
    void unalignedBoundsAreNarrowedToTheAlignedTargetsInside() {
        FrontierSettings s = new FrontierSettings(65000, 1_000_000, 0.01, 256, 12, PAD, 1);

        List<Probe> probes = drive(new FrontierStrategy(s), SimulatedEngine.noHint(10_000));

        assertThat(probes).extracting(Probe::target).containsExactly(999_936L, 65024L);
    }

    @Test
    void everyTargetIsAlignedAndInsideTheSettings() {
        FrontierSettings odd = new FrontierSettings(1001, 9999, 0.001, 100, 40, 0, 1);
        for (long capacity : Arrays.asList(500L, 1100L, 5555L, 9950L, 20000L)) {
            SimulatedEngine engine = SimulatedEngine.noHint(capacity);
            Frontier f = assertSound(odd, drive(new FrontierStrategy(odd), engine), engine);
            assertWithinPrecision(odd, f, trueMax(odd, engine));
        }
    }

    /**
     * Prints, without asserting on the counts, what the frontier search costs against the seeds'
     * list of nine targets on the same engines; the answers themselves are checked for soundness.
     */
    @Test
    void launchCountsAgainstTheSeedsList() {
        // A supplier, because an engine with a launch counter must start afresh for each search.
        record Scenario(String name, Supplier<SimulatedEngine> engine) {}
        List<Scenario> scenarios = List.of(
                new Scenario("vllm-like hint, cap 1,000,000", () -> SimulatedEngine.vllmLike(1_000_000, PAD)),
                new Scenario("vllm-like hint, cap 300,000", () -> SimulatedEngine.vllmLike(300_000, PAD)),
                new Scenario("sglang-like hint, 700,001", () -> SimulatedEngine.sglangLike(700_001)),
                new Scenario("no hint, cap 500,001", () -> SimulatedEngine.noHint(500_001)),
                new Scenario("no hint, cap 100,000", () -> SimulatedEngine.noHint(100_000)),
                new Scenario("everything fits", () -> SimulatedEngine.noHint(2_000_000)),
                new Scenario("nothing fits", () -> SimulatedEngine.noHint(50_000)),
                new Scenario(
                        "non-monotonic hole 640k-670k, cap 900k",
                        () -> SimulatedEngine.failing(t -> (t >= 640_000 && t < 670_000) || t > 900_000)),
                new Scenario(
                        "port_busy at launch 3, no hint",
                        () -> SimulatedEngine.portBusyAt(3, SimulatedEngine.noHint(500_001))));
        StringBuilder table = new StringBuilder(String.format(
                Locale.ROOT,
                "%-40s %9s %-22s %-14s %6s %6s %-22s %s%n",
                "scenario",
                "frontier",
                "frontier max / next",
                "stopped",
                "list",
                "list-s",
                "list max / next",
                "list non-monotonic"));
        for (Scenario sc : scenarios) {
            List<Probe> frontier =
                    drive(new FrontierStrategy(SEEDS), sc.engine().get());
            Frontier f = new FrontierStrategy(SEEDS).answer(frontier);
            List<Probe> list =
                    drive(new ListStrategy(SEED_TARGETS, false), sc.engine().get());
            List<Probe> listStopping =
                    drive(new ListStrategy(SEED_TARGETS, true), sc.engine().get());
            Frontier l = Strategy.hinted(list, PAD, 1);
            if (!sc.name().startsWith("port_busy")) {
                assertSound(SEEDS, frontier, sc.engine().get());
            }
            assertThat(frontier).hasSizeLessThanOrEqualTo(SEEDS.maxLaunches());
            table.append(String.format(
                    Locale.ROOT,
                    "%-40s %9d %-22s %-14s %6d %6d %-22s %s%n",
                    sc.name(),
                    f.launches(),
                    f.maxOkTarget() + " / " + f.minFailedTarget(),
                    f.stoppedBecause(),
                    list.size(),
                    listStopping.size(),
                    l.maxOkTarget() + " / " + l.minFailedTarget(),
                    l.nonMonotonic()));
        }
        System.out.print(table);
    }

    /** Checks what must hold for any search and returns its summary. */
    private static Frontier assertSound(FrontierSettings s, List<Probe> probes, SimulatedEngine engine) {
        assertThat(probes).hasSizeLessThanOrEqualTo(s.maxLaunches());
        for (Probe p : probes) {
            assertThat(p.target() % s.align()).as("aligned: %s", probes).isZero();
            assertThat(p.target()).as("in range: %s", probes).isBetween(s.lowestTarget(), s.highestTarget());
            assertThat(engine.run(p.target()).passed()).isEqualTo(p.passed());
        }
        Frontier f = new FrontierStrategy(s).answer(probes);
        if (f.maxOkTarget() != null) {
            assertThat(probes).as("max ok is proven").anyMatch(p -> p.passed() && p.target() == f.maxOkTarget());
        }
        if (f.minFailedTarget() != null) {
            assertThat(probes)
                    .as("min failed is proven")
                    .anyMatch(p -> !p.passed() && p.target() == f.minFailedTarget());
        }
        if (f.maxOkTarget() != null && f.minFailedTarget() != null) {
            assertThat(f.maxOkTarget()).isLessThan(f.minFailedTarget());
        }
        assertThat(f.launches()).isEqualTo(probes.size());
        return f;
    }

    private static void assertWithinPrecision(FrontierSettings s, Frontier f, Long trueMax) {
        if (trueMax == null) {
            assertThat(f.maxOkTarget()).isNull();
            assertThat(f.stoppedBecause()).isEqualTo(Frontier.NOTHING_FITS);
            return;
        }
        assertThat(f.maxOkTarget()).isNotNull().isLessThanOrEqualTo(trueMax);
        long shortBy = trueMax - f.maxOkTarget();
        assertThat(shortBy <= s.precision() * f.maxOkTarget() || shortBy < s.align())
                .as("found %s, true max %d", f, trueMax)
                .isTrue();
    }

    /** The largest aligned target in range that passes, for engines that fit monotonically. */
    private static Long trueMax(FrontierSettings s, SimulatedEngine engine) {
        return LongStream.iterate(s.highestTarget(), t -> t >= s.lowestTarget(), t -> t - s.align())
                .filter(t -> engine.run(t).passed())
                .boxed()
                .findFirst()
                .orElse(null);
    }
}
