package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 25: the capacity map under a backend's answer, one line per concurrency, as console and reports show it. */
class SurfaceLinesTest {

    private static final Frontier SINGLE =
            new Frontier(16_128L, 16_384L, 0.016, 2, null, List.of(), "per_target", "frontier", null, null);

    @Test
    void eachLevelHasItsLineWithItsCauseAndPrediction() {
        Frontier f = SINGLE.withSurface(List.of(
                new Frontier.Surface(
                        2, 7_936L, 8_192L, "request_rejected", "Context size has been exceeded.", 8_176L, 1, null),
                new Frontier.Surface(
                        8,
                        null,
                        256L,
                        "not_concurrent",
                        "all 8 requests were served, but not held at once: queued (4 of them got their first token"
                                + " only after request 0 had finished): more requests than slots (8 sent, the server"
                                + " has 4)",
                        null,
                        0,
                        Frontier.NOTHING_FITS)));

        List<String> lines = FrontierLine.surface(7, f, List.of());

        assertThat(lines)
                .containsExactly(
                        "  x2    max 7,936 tokens held at once (next 8,192 fails: request_rejected)  predicted 8,176",
                        "  x8    nothing held at once (smallest tried 256 fails: not_concurrent (not held at once:"
                                + " queued (4 of them got their first token only after request 0 had finished): more"
                                + " requests than slots (8 sent, the server has 4)))");
    }

    private static Scenario stated(long target, int n, ServedCapacity c) {
        Scenario.Server server = new Scenario.Server(
                "local:1", 1.0, null, "/health", 1L, null, null, true, List.of(), null, null, null, c, null, null,
                List.of());
        return Scenario.builder(new Point("b", null, target, n), target + 1024, "serve")
                .server(server, null)
                .build();
    }

    private static Frontier oneLevel() {
        return SINGLE.withSurface(List.of(new Frontier.Surface(2, 7_936L, 8_192L, null, null, 8_176L, 0, null)));
    }

    @Test
    void eachEngineStatesWhatItHoldsAtOnceInItsOwnWords() {
        ServedCapacity vllm = new ServedCapacity(
                32_768L, 32_767L, 79_000L, null, null, null, null, null, null, null, 2.41, null, List.of("log"));
        ServedCapacity sglang = new ServedCapacity(
                32_768L, 32_761L, 19_660L, null, null, null, null, null, null, null, null, 4_096, List.of("log"));
        ServedCapacity unified =
                new ServedCapacity(16_384L, null, null, 4, true, null, null, null, null, null, List.of("props"));
        ServedCapacity split =
                new ServedCapacity(4_096L, null, null, 4, false, null, null, null, null, null, List.of("props"));

        assertThat(FrontierLine.surface(7, oneLevel(), List.of(stated(16_128, 1, vllm)))
                        .getFirst())
                .endsWith("predicted 8,176  engine states 2.41x of 32,768 tokens");
        assertThat(FrontierLine.surface(7, oneLevel(), List.of(stated(16_128, 1, sglang)))
                        .getFirst())
                .endsWith("engine states max_running_requests 4,096, pool 19,660 tokens");
        assertThat(FrontierLine.surface(7, oneLevel(), List.of(stated(16_128, 1, unified)))
                        .getFirst())
                .endsWith("engine states 4 slots, unified 16,384");
        // The level's own server's statement wins over the single-prompt servers'.
        assertThat(FrontierLine.surface(7, oneLevel(), List.of(stated(16_128, 1, unified), stated(7_936, 2, split)))
                        .getFirst())
                .endsWith("engine states 4 slots of 4,096");
        assertThat(FrontierLine.surface(7, oneLevel(), List.of(stated(16_128, 1, ServedCapacity.NONE)))
                        .getFirst())
                .doesNotContain("engine states");
    }

    @Test
    void aLevelAboveTheStatedSlotsSaysSoWithoutAStep() {
        Frontier f = SINGLE.withSurface(List.of(new Frontier.Surface(
                8,
                null,
                null,
                "not_concurrent",
                "more requests than slots (8 at once, the server has 4): not sent",
                null,
                0,
                Frontier.NOTHING_FITS)));

        assertThat(FrontierLine.surface(7, f, List.of()))
                .containsExactly("  x8    nothing held at once (more requests than slots (8 at once, the server has 4):"
                        + " not sent)");
    }

    @Test
    void aBackendWithoutAMapHasNoLines() {
        assertThat(FrontierLine.surface(7, SINGLE, List.of())).isEmpty();
    }
}
