package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Source;
import org.junit.jupiter.api.Test;

/** The demo (experiments/demo.yaml): ctxprobe's own engine with the micro model and an 8 MiB KV budget. */
class EmbeddedPredictionTest {

    @Test
    void theDemoIsPredictedExactlyAsTheEngineRefuses() throws Exception {
        Prediction plan =
                Predictor.plan(Fixtures.experiment("experiments/demo.yaml"), PredictInputs.none(), Engines::sizing);
        BackendPrediction p = Fixtures.backend(plan, "embedded");

        // 8 MiB / (1 layer x 2 x 32 x 2 B + 64 B) = 43,690 tokens; ctx-size = target + 1,024 rounded up to 32 must
        // stay within it: target 42,656, aligned down to 256 = 42,496 (the demo's run found the same frontier).
        assertThat(p.target()).isEqualTo(42_496);
        assertThat(p.bound()).isEqualTo(Bound.KV_MEMORY);
        assertThat(p.largestTarget()).isEqualTo(42_656);
        assertThat(p.kv().capacity()).isEqualTo(43_690);
        assertThat(p.kv().bytesPerToken()).isEqualTo(192.0);
        assertThat(p.summary()).contains("43,776 > 43,690");
        assertThat(p.missing()).isEmpty();
        assertThat(p.inputs())
                .anySatisfy(i -> {
                    assertThat(i.name()).isEqualTo("--kv-memory");
                    assertThat(i.value()).isEqualTo("8MiB");
                    assertThat(i.source()).isEqualTo(Source.FLAG);
                })
                .anySatisfy(i -> {
                    assertThat(i.name()).isEqualTo("--shape");
                    assertThat(i.source()).isEqualTo(Source.DEFAULT);
                });
        assertThat(plan.warnings()).isEmpty();
    }

    @Test
    void parallelSlotsEachHoldTheirShareOfTheContext() throws Exception {
        Prediction plan = Predictor.plan(
                Fixtures.experiment("experiments/capacity-demo.yaml"), PredictInputs.none(), Engines::sizing);
        BackendPrediction p = Fixtures.backend(plan, "embedded");

        // --ctx-size 4096 --parallel 2: each slot holds 2,048 tokens, a prompt and one output token fit up to 2,047,
        // aligned down to 16: 2,032 (the example's run finds the same frontier).
        assertThat(p.largestTarget()).isEqualTo(2_047);
        assertThat(p.target()).isEqualTo(2_032);
        assertThat(p.bound()).isEqualTo(Bound.ENGINE_SLOTS);
        assertThat(p.summary()).contains("the slot's context 2,048 (n_ctx 4,096 / --parallel 2)");
        assertThat(p.inputs()).anySatisfy(i -> {
            assertThat(i.name()).isEqualTo("--parallel");
            assertThat(i.value()).isEqualTo("2");
            assertThat(i.source()).isEqualTo(Source.FLAG);
        });
    }
}
