package dev.ctxprobe.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Expected values are what numpy.percentile (default method "linear") prints for the same input. */
class PercentilesTest {

    private static final double[] ONE_TO_TEN = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

    @Test
    void matchesNumpyOnOneToTen() {
        assertThat(Percentiles.of(ONE_TO_TEN, 90)).isEqualTo(9.1);
        assertThat(Percentiles.of(ONE_TO_TEN, 50)).isEqualTo(5.5);
        assertThat(Percentiles.of(ONE_TO_TEN, 95)).isEqualTo(9.549999999999999);
        assertThat(Percentiles.of(ONE_TO_TEN, 99)).isEqualTo(9.91);
        assertThat(Percentiles.of(ONE_TO_TEN, 0)).isEqualTo(1.0);
        assertThat(Percentiles.of(ONE_TO_TEN, 100)).isEqualTo(10.0);
    }

    @Test
    void matchesNumpyOnSmallSets() {
        assertThat(Percentiles.of(new double[] {1, 2, 3, 4}, 50)).isEqualTo(2.5);
        assertThat(Percentiles.of(new double[] {15, 20, 35, 40, 50}, 99)).isEqualTo(49.6);
        assertThat(Percentiles.of(new double[] {15, 20, 35, 40, 50}, 40)).isEqualTo(29.0);
    }

    @Test
    void unsortedInputIsSortedWithoutBeingChanged() {
        double[] samples = {50, 15, 40, 20, 35};

        assertThat(Percentiles.of(samples, 99)).isEqualTo(49.6);
        assertThat(samples).containsExactly(50, 15, 40, 20, 35);
    }

    @Test
    void oneSampleIsEveryPercentileAndNoneIsZero() {
        assertThat(Percentiles.of(new double[] {521.25}, 99)).isEqualTo(521.25);
        assertThat(Percentiles.of(new double[] {521.25}, 50)).isEqualTo(521.25);
        assertThat(Percentiles.of(new double[0], 90)).isEqualTo(0.0);
    }

    @Test
    void rejectsPercentilesOutsideTheScale() {
        assertThatThrownBy(() -> Percentiles.of(ONE_TO_TEN, 101)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Percentiles.of(ONE_TO_TEN, Double.NaN)).isInstanceOf(IllegalArgumentException.class);
    }
}
