package dev.ctxprobe.results;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The three bands of "% of roofline" (docs/results.md): plausible up to 80%, suspect above, impossible above 100%. */
class RooflineFlagTest {

    // 1e12 FLOPs a token on one device of 1,000 TFLOPS: a floor of exactly 1 ms a token, 1 s at 1,000 tokens.
    private static final PrefillFloor FLOOR = new PrefillFloor(
            "m",
            1e12,
            "1e12 a token",
            List.of(),
            "test device",
            1,
            List.of(new PrefillFloor.Peak("fp8", 1000, "stated for the test")),
            List.of(),
            null,
            List.of());

    @Test
    void theBandsMeetAtEightyAndAHundredPercent() {
        assertThat(Roofline.flagOf(80)).isEqualTo(Roofline.PLAUSIBLE);
        assertThat(Roofline.flagOf(80.01)).isEqualTo(Roofline.SUSPECT);
        assertThat(Roofline.flagOf(100)).isEqualTo(Roofline.SUSPECT);
        assertThat(Roofline.flagOf(100.01)).isEqualTo(Roofline.IMPOSSIBLE);
    }

    @Test
    void aTtftBetweenTheFloorAndItsEightyPercentIsSuspectAndSaysWhy() {
        // 1 s of floor in 1.1 s: 90.9% of roofline.
        Roofline r = FLOOR.judge(1000, 1.1);

        assertThat(r.percent()).isCloseTo(90.909, offset(0.01));
        assertThat(r.flag()).isEqualTo(Roofline.SUSPECT);
        assertThat(r.flagged()).isTrue();
        assertThat(PrefillFloor.warning(r, 1.1))
                .startsWith("90.9% of roofline: TTFT 1.100 s against a floor of 1.000 s")
                .contains("above the best published prefill efficiency (about 80%)")
                .doesNotContain("above 100%");
    }

    @Test
    void aTtftAtTwiceTheFloorIsPlausibleAndCarriesNoWarning() {
        Roofline r = FLOOR.judge(1000, 2.0);

        assertThat(r.percent()).isCloseTo(50.0, offset(1e-9));
        assertThat(r.flag()).isEqualTo(Roofline.PLAUSIBLE);
        assertThat(PrefillFloor.warning(r, 2.0)).isNull();
    }

    @Test
    void aTtftBelowTheFloorIsImpossible() {
        Roofline r = FLOOR.judge(1000, 0.5);

        assertThat(r.flag()).isEqualTo(Roofline.IMPOSSIBLE);
        assertThat(PrefillFloor.warning(r, 0.5)).contains("faster than the hardware can compute this prompt");
    }
}
