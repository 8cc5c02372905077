package dev.ctxprobe.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class StatsTest {

    @Test
    void summarisesLikeNumpy() {
        Stats s = Stats.of(List.of(4.0, 2.0, 1.0, 3.0));

        assertThat(s.mean()).isEqualTo(2.5);
        assertThat(s.p50()).isEqualTo(2.5);
        assertThat(s.p90()).isEqualTo(3.7);
        assertThat(s.p95()).isEqualTo(3.8499999999999996);
        assertThat(s.p99()).isEqualTo(3.9699999999999998);
        assertThat(s.count()).isEqualTo(4);
        // numpy.std([1, 2, 3, 4]) = sqrt(1.25), the population deviation
        assertThat(s.std()).isCloseTo(Math.sqrt(1.25), within(1e-12));
        assertThat(s.min()).isEqualTo(1.0);
        assertThat(s.max()).isEqualTo(4.0);
    }

    @Test
    void oneSampleIsEveryStatistic() {
        Stats s = Stats.of(new double[] {521.2510440032929});

        assertThat(List.of(s.mean(), s.p50(), s.p90(), s.p95(), s.p99(), s.min(), s.max()))
                .containsOnly(521.2510440032929);
        assertThat(s.std()).isZero();
        assertThat(s.count()).isEqualTo(1);
    }

    @Test
    void noSamplesIsAllZero() {
        assertThat(Stats.of(new double[0])).isEqualTo(new Stats(0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0));
    }

    @Test
    void serialisesSeedKeysFirst() {
        String json = JsonMapper.builder().build().writeValueAsString(Stats.of(new double[] {1, 2}));

        assertThat(json)
                .isEqualTo("{\"mean\":1.5,\"p50\":1.5,\"p90\":1.9,\"p95\":1.95,\"p99\":1.99,"
                        + "\"count\":2,\"std\":0.5,\"min\":1.0,\"max\":2.0}");
    }
}
