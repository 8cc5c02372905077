package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.metrics.Stats;
import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one frontier line the console and every report format lead with. */
class FrontierLineTest {

    private static Scenario ok(long target, double ttftMs) {
        Stats ttft = Stats.of(new double[] {ttftMs});
        StepMetrics m =
                new StepMetrics(1, 1, ttftMs / 1000, 1, target, 1, target, 1, ttft, ttft, Stats.EMPTY, Stats.EMPTY);
        return Scenario.builder("b", target, target + 1024, "serve")
                .measured(m, null, null, null)
                .build();
    }

    private static Scenario failed(long target, FailureClass c) {
        return Scenario.builder("b", target, target + 1024, "serve")
                .outcome(Outcome.failed(c), "server failed to start: no", null)
                .build();
    }

    @Test
    void theLineMatchesTheDocumentedExample() {
        Frontier f = new Frontier(998_912L, 1_001_216L, 0.0023, 5, null, List.of(), null, null, null, null);
        List<Scenario> steps = List.of(ok(998_912, 3_700), failed(1_001_216, FailureClass.KV_INSUFFICIENT));

        assertThat(FrontierLine.line("vllm", 6, f, steps))
                .isEqualTo("vllm   max 998,912 tokens (next 1,001,216 fails: kv_insufficient)  5 launches  TTFT 3.7 s");
    }

    @Test
    void theLineCoversEveryOutcome() {
        Frontier all =
                new Frontier(1_048_576L, null, null, 1, null, List.of(), null, null, Frontier.FULL_RANGE_FITS, null);
        Frontier none = new Frontier(null, 65_536L, null, 2, null, List.of(), null, null, Frontier.NOTHING_FITS, null);
        Frontier busy = new Frontier(null, null, null, 1, null, List.of(), null, null, "port_busy", null);
        Frontier budget =
                new Frontier(99_072L, 100_096L, 0.0103, 12, null, List.of(), null, null, Frontier.MAX_LAUNCHES, null);
        Frontier holes =
                new Frontier(786_432L, 917_504L, 0.17, 9, null, List.of(655_360L, 700_416L), null, null, null, null);

        assertThat(FrontierLine.line("sglang", 6, all, List.of(ok(1_048_576, 12_260))))
                .isEqualTo("sglang max 1,048,576 tokens (full range fits)  1 launch  TTFT 12.3 s");
        assertThat(FrontierLine.line("vllm", 6, none, List.of(failed(65_536, FailureClass.OOM_STARTUP))))
                .isEqualTo("vllm   nothing fits (smallest tried 65,536 fails: oom_startup)  2 launches");
        assertThat(FrontierLine.line("vllm", 2, busy, List.of()))
                .isEqualTo("vllm no answer  1 launch  stopped: port_busy");
        assertThat(FrontierLine.line("x", 1, budget, List.of(ok(99_072, 40))))
                .isEqualTo("x max 99,072 tokens (next 100,096 fails)  12 launches  TTFT 40 ms  stopped: max_launches");
        assertThat(FrontierLine.line("llamacpp", 8, holes, List.of(failed(917_504, FailureClass.KV_INSUFFICIENT))))
                .isEqualTo("llamacpp max 786,432 tokens (next 917,504 fails: kv_insufficient)  9 launches"
                        + "  non-monotonic: 655,360; 700,416 failed below the max");
    }

    @Test
    void aSeedsFailureWithoutAClassShowsItsSentence() {
        Frontier f = new Frontier(917_504L, 1_048_576L, 0.14, 9, null, List.of(), null, null, null, null);
        Scenario seedFailure = Scenario.builder("vllm", 1_048_576, 1_049_600, "vllm serve")
                .outcome(Outcome.UNCLASSIFIED, "server failed to start", null)
                .build();

        assertThat(FrontierLine.answer(f, List.of(seedFailure)))
                .isEqualTo("max 917,504 tokens (next 1,048,576 fails: server failed to start)  9 launches");
    }
}
