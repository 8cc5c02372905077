package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.engine.HintKind;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

class FrontierTest {

    private static Probe pass(long target) {
        return new Probe(target, null, null, null);
    }

    private static Probe fail(long target) {
        return new Probe(target, FailureClass.KV_INSUFFICIENT, null, null);
    }

    @Test
    void summarisesTheBracketFromProbesOnly() {
        List<Probe> probes = List.of(
                new Probe(1048576, FailureClass.KV_INSUFFICIENT, 1_000_000L, HintKind.MAX_MODEL_LEN),
                pass(65536),
                pass(557056),
                fail(1_001_216),
                pass(998_912));

        Frontier f = Frontier.of(probes, 1024, 1);

        assertThat(f.maxOkTarget()).isEqualTo(998_912L);
        assertThat(f.minFailedTarget()).isEqualTo(1_001_216L);
        assertThat(f.bracketRatio()).isCloseTo((1_001_216 - 998_912) / 998_912.0, Offset.offset(1e-12));
        assertThat(f.launches()).isEqualTo(5);
        assertThat(f.predictedMax()).isEqualTo(998_976L);
        assertThat(f.nonMonotonic()).isEmpty();
        assertThat(f.stoppedBecause()).isNull();
    }

    @Test
    void failuresBelowAPassAreListedAndTheNextFailureIsTheSmallestAbove() {
        List<Probe> probes = List.of(pass(20480), fail(29696), pass(35840), fail(29696), fail(65536), fail(50000));

        Frontier f = Frontier.of(probes, 1024, 1);

        assertThat(f.maxOkTarget()).isEqualTo(35840L);
        assertThat(f.minFailedTarget()).isEqualTo(50000L);
        assertThat(f.nonMonotonic()).containsExactly(29696L);
    }

    @Test
    void aPromptLimitHintPredictsHintMinusTheAllowanceAndTheLatestHintWins() {
        List<Probe> probes = List.of(
                new Probe(1048576, FailureClass.KV_INSUFFICIENT, 900_000L, HintKind.MAX_MODEL_LEN),
                new Probe(800_000, FailureClass.REQUEST_REJECTED, 700_001L, HintKind.PROMPT_LEN));

        assertThat(Frontier.of(probes, 1024, 1).predictedMax()).isEqualTo(700_000L);
        assertThat(Frontier.of(probes, 1024, 3).predictedMax()).isEqualTo(699_998L);
    }

    @Test
    void saysWhenEverythingOrNothingFitsAndWhatStoppedIt() {
        assertThat(Frontier.of(List.of(pass(1048576)), 1024, 1).stoppedBecause())
                .isEqualTo(Frontier.FULL_RANGE_FITS);
        Frontier none = Frontier.of(List.of(fail(1048576), fail(65536)), 1024, 1);
        assertThat(none.stoppedBecause()).isEqualTo(Frontier.NOTHING_FITS);
        assertThat(none.minFailedTarget()).isEqualTo(65536L);
        assertThat(none.bracketRatio()).isNull();
        Frontier busy = Frontier.of(
                List.of(fail(1048576), pass(65536), new Probe(557056, FailureClass.GPU_BUSY, null, null)), 1024, 1);
        assertThat(busy.stoppedBecause()).isEqualTo("gpu_busy");
        assertThat(busy.minFailedTarget()).isEqualTo(1048576L);
        Frontier empty = Frontier.of(List.of(), 1024, 1);
        assertThat(empty.maxOkTarget()).isNull();
        assertThat(empty.stoppedBecause()).isNull();
        assertThat(empty.launches()).isZero();
    }

    @Test
    void launchesCanBeCountedSeparatelyFromProbes() {
        Frontier f = Frontier.of(List.of(fail(1048576), pass(65536), pass(500_000)), 1024, 1);

        Frontier relaunched = f.withLaunches(1);

        assertThat(relaunched.launches()).isEqualTo(1);
        assertThat(relaunched)
                .usingRecursiveComparison()
                .ignoringFields("launches")
                .isEqualTo(f);
    }

    @Test
    void theConsoleLineMatchesTheSpecExample() {
        Frontier f = new Frontier(998_912L, 1_001_216L, 0.0023, 5, null, List.of(), null);

        assertThat(FrontierLine.line("vllm", 6, f, FailureClass.KV_INSUFFICIENT, 3.7))
                .isEqualTo("vllm   max 998,912 tokens (next 1,001,216 fails: kv_insufficient)  5 launches  TTFT 3.7 s");
    }

    @Test
    void theConsoleLineCoversEveryOutcome() {
        Frontier all = new Frontier(1_048_576L, null, null, 1, null, List.of(), Frontier.FULL_RANGE_FITS);
        Frontier none = new Frontier(null, 65_536L, null, 2, null, List.of(), Frontier.NOTHING_FITS);
        Frontier busy = new Frontier(null, null, null, 1, null, List.of(), "port_busy");
        Frontier budget = new Frontier(99_072L, 100_096L, 0.0103, 12, null, List.of(), Frontier.MAX_LAUNCHES);
        Frontier holes = new Frontier(786_432L, 917_504L, 0.17, 9, null, List.of(655_360L, 700_416L), null);

        assertThat(FrontierLine.line("sglang", 6, all, null, 12.25))
                .isEqualTo("sglang max 1,048,576 tokens (full range fits)  1 launch  TTFT 12.3 s");
        assertThat(FrontierLine.line("vllm", 6, none, FailureClass.OOM_STARTUP, null))
                .isEqualTo("vllm   nothing fits (smallest tried 65,536 fails: oom_startup)  2 launches");
        assertThat(FrontierLine.line("vllm", 2, busy, null, null))
                .isEqualTo("vllm no answer  1 launch  stopped: port_busy");
        assertThat(FrontierLine.line("x", 1, budget, null, 0.04))
                .isEqualTo("x max 99,072 tokens (next 100,096 fails)  12 launches  stopped: max_launches  TTFT 0.0 s");
        assertThat(FrontierLine.line("llamacpp", 8, holes, FailureClass.KV_INSUFFICIENT, null))
                .isEqualTo("llamacpp max 786,432 tokens (next 917,504 fails: kv_insufficient)  9 launches"
                        + "  non-monotonic: 655,360; 700,416 failed below the max");
    }
}
