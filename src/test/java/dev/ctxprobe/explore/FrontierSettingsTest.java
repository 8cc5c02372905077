package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FrontierSettingsTest {

    @Test
    void theSeedDefaultsAreAlreadyAligned() {
        FrontierSettings s = new FrontierSettings(65536, 1048576, 0.01, 256, 12, 1024, 1);

        assertThat(s.lowestTarget()).isEqualTo(65536);
        assertThat(s.highestTarget()).isEqualTo(1048576);
    }

    @Test
    void unalignedBoundsAreNarrowedInwards() {
        FrontierSettings s = new FrontierSettings(65000, 1_000_000, 0.01, 256, 12, 1024, 1);

        assertThat(s.lowestTarget()).isEqualTo(65024);
        assertThat(s.highestTarget()).isEqualTo(999_936);
        assertThat(s.min()).isEqualTo(65000);
    }

    @Test
    void aRangeWithoutAnAlignedTargetIsRejected() {
        assertThatThrownBy(() -> new FrontierSettings(1030, 1100, 0.01, 256, 12, 0, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no multiple of align 256 lies between frontier min 1030 and max 1100:"
                        + " widen the range or lower align");
    }

    @Test
    void eachBadValueIsNamedWithWhatToWriteInstead() {
        assertRejected(() -> new FrontierSettings(0, 1024, 0.01, 256, 12, 0, 1), "frontier min must be a positive");
        assertRejected(
                () -> new FrontierSettings(2048, 1024, 0.01, 256, 12, 0, 1),
                "frontier max (1024) is below min (2048): write a max of at least 2048");
        assertRejected(() -> new FrontierSettings(256, 1024, 0.01, 0, 12, 0, 1), "align must be a positive");
        assertRejected(() -> new FrontierSettings(256, 1024, 0, 256, 12, 0, 1), "precision must be a positive");
        assertRejected(
                () -> new FrontierSettings(256, 1024, Double.NaN, 256, 12, 0, 1), "precision must be a positive");
        assertRejected(
                () -> new FrontierSettings(256, 1024, Double.POSITIVE_INFINITY, 256, 12, 0, 1),
                "precision must be a positive");
        assertRejected(() -> new FrontierSettings(256, 1024, 0.01, 256, 0, 0, 1), "max_launches must be at least 1");
        assertRejected(() -> new FrontierSettings(256, 1024, 0.01, 256, 12, -1, 1), "context_pad must not be negative");
        assertRejected(
                () -> new FrontierSettings(256, Long.MAX_VALUE - 10, 0.01, 256, 12, 1024, 1),
                "overflows max_model_len");
        assertRejected(() -> new FrontierSettings(256, 1024, 0.01, 256, 12, 0, -1), "allowance must not be negative");
    }

    private static void assertRejected(Runnable build, String message) {
        assertThatThrownBy(build::run)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }
}
