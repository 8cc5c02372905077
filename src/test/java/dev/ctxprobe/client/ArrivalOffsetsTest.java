package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ArrivalOffsetsTest {

    @Test
    void infiniteRateSendsEverythingAtOnce() {
        assertThat(LoadRunner.arrivalOffsets(5, Double.POSITIVE_INFINITY, 0)).containsOnly(0.0);
    }

    @Test
    void poissonArrivalsStartAtOnceAndHaveTheMeanGapOfTheRate() {
        double[] offsets = LoadRunner.arrivalOffsets(20_001, 4.0, 0);

        assertThat(offsets[0]).isZero();
        for (int i = 1; i < offsets.length; i++) {
            assertThat(offsets[i]).isGreaterThanOrEqualTo(offsets[i - 1]);
        }
        assertThat(offsets[offsets.length - 1] / (offsets.length - 1)).isCloseTo(0.25, within(0.01));
    }

    @Test
    void arrivalsAreReproducible() {
        assertThat(LoadRunner.arrivalOffsets(10, 3.0, 0)).isEqualTo(LoadRunner.arrivalOffsets(10, 3.0, 0));
        assertThat(LoadRunner.arrivalOffsets(10, 3.0, 0)).isNotEqualTo(LoadRunner.arrivalOffsets(10, 3.0, 1));
    }
}
