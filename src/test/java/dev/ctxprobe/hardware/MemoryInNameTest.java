package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A hardware name states the memory as ctxprobe writes it (MiB / 1000 as GB), and is read back the same way. */
class MemoryInNameTest {
    @Test
    void theSeedsNameStatesAtLeast143000MiBADevice() {
        assertThat(HardwareProbe.memoryMiBInName("8x NVIDIA H200 143GB")).isEqualTo(143_000L);
        assertThat(HardwareProbe.memoryMiBInName("1x NVIDIA H100 80GB HBM3 79GB"))
                .isEqualTo(79_000L);
    }

    @Test
    void aMixedMachineGivesItsSmallestDeviceAndANameWithoutMemoryGivesNothing() {
        assertThat(HardwareProbe.memoryMiBInName("4x NVIDIA H200 143GB + 2x NVIDIA L4 23GB"))
                .isEqualTo(23_000L);
        assertThat(HardwareProbe.memoryMiBInName("4x NVIDIA H200 143GB + 2x Kunlun P800 XPU"))
                .isNull();
        assertThat(HardwareProbe.memoryMiBInName("8x Kunlun P800 XPU")).isNull();
        assertThat(HardwareProbe.memoryMiBInName("cpu: AMD EPYC")).isNull();
        assertThat(HardwareProbe.memoryMiBInName(null)).isNull();
    }
}
