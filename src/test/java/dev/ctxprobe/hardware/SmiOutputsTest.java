package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SmiOutputsTest {

    static final String NVIDIA_8X_H200 = """
            0, NVIDIA H200, 143771, 4, 570.124.06
            1, NVIDIA H200, 143771, 4, 570.124.06
            2, NVIDIA H200, 143771, 4, 570.124.06
            3, NVIDIA H200, 143771, 4, 570.124.06
            4, NVIDIA H200, 143771, 4, 570.124.06
            5, NVIDIA H200, 143771, 4, 570.124.06
            6, NVIDIA H200, 143771, 4, 570.124.06
            7, NVIDIA H200, 143771, 130512, 570.124.06
            """;

    static final String ROCM_MEMINFO = """
            WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status

            {"card0": {"VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "283459584"}, \
            "card1": {"VRAM Total Memory (B)": "206141652992", "VRAM Total Used Memory (B)": "107374182400"}}
            """;

    static final String ROCM_NAMES = """
            {"card0": {"Card Series": "AMD Instinct MI300X OAM", "Card Model": "0x74a1", "Card Vendor": \
            "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "M3000100", "GFX Version": "gfx942"}, \
            "card1": {"Card Series": "AMD Instinct MI300X OAM", "Card Model": "0x74a1", "GFX Version": "gfx942"}}
            """;

    // Kunlun xpu-smi -m: one line per device; fields 18 and 19 (1-based) are used and total MiB.
    static final String KUNLUN_2X_P800 = """
            0 0000:52:00.0 P800 N/A 35C 85W 400W 0% 0% 0% 0% 0 0 0 0 0 0 1024 98304 0 Normal
            1 0000:53:00.0 P800 N/A 36C 86W 400W 0% 0% 0% 0% 0 0 0 0 0 0 80640 98304 0 Normal
            """;

    static final String INTEL_XPU_SMI = """
            Intel(R) XPU System Management Interface -- v1.2
            Intel(R) XPU System Management Interface provides the Intel data center GPU model and monitoring \
            capabilities.
            Usage: xpu-smi [Options]
              xpu-smi -v
              xpu-smi discovery
            The following argument was not expected: -m
            Run with --help for more information.
            """;

    @Test
    void readsNvidiaCsv() {
        SmiOutputs.Parsed parsed = SmiOutputs.nvidiaGpus(NVIDIA_8X_H200);
        assertThat(parsed.ok()).isTrue();
        assertThat(parsed.devices()).hasSize(8);
        assertThat(parsed.devices().get(7)).isEqualTo(new Device(7, "NVIDIA H200", 143_771L, 130_512L));
    }

    @Test
    void nvidiaMemoryThatIsNotReportedIsNull() {
        SmiOutputs.Parsed parsed = SmiOutputs.nvidiaGpus("0, NVIDIA GB10, [N/A], [N/A], 580.95.05\n");
        assertThat(parsed.devices()).containsExactly(new Device(0, "NVIDIA GB10", null, null));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
                "garbage\u0000\u0001 ,,,",
                "",
                "0, , 1, 2, 3"
            })
    void unexpectedNvidiaOutputIsAProblemNotAnException(String output) {
        SmiOutputs.Parsed parsed = SmiOutputs.nvidiaGpus(output);
        assertThat(parsed.ok()).isFalse();
        assertThat(parsed.devices()).isEmpty();
        assertThat(parsed.problem()).contains("nvidia-smi");
    }

    @Test
    void readsComputeApps() {
        assertThat(SmiOutputs.nvidiaComputePids("12345, 80000\n23456, [N/A]\n").pids())
                .containsExactly(12345L, 23456L);
        assertThat(SmiOutputs.nvidiaComputePids("").pids()).isEmpty();
        assertThat(SmiOutputs.nvidiaComputePids("No running processes found\n").pids())
                .isEmpty();
        assertThat(SmiOutputs.nvidiaComputePids("pid, used_memory [MiB]\n").problem())
                .contains("unexpected nvidia-smi output: pid, used_memory");
    }

    @Test
    void readsRocmJsonAfterWarningsWithProductNames() {
        SmiOutputs.Parsed parsed = SmiOutputs.rocmGpus(ROCM_MEMINFO, ROCM_NAMES);
        assertThat(parsed.devices())
                .containsExactly(
                        new Device(0, "AMD Instinct MI300X OAM", 196_592L, 270L),
                        new Device(1, "AMD Instinct MI300X OAM", 196_592L, 102_400L));
    }

    @Test
    void rocmWithoutProductNamesStillGivesDevices() {
        assertThat(SmiOutputs.rocmGpus(ROCM_MEMINFO, null).devices())
                .extracting(Device::name)
                .containsOnly("AMD GPU");
        assertThat(SmiOutputs.rocmGpus("not json at all", null).problem()).contains("unexpected rocm-smi output");
        assertThat(SmiOutputs.rocmGpus("{\"system\": {}}", null).problem()).contains("listed no GPU");
    }

    @Test
    void readsKunlunFields18And19() {
        SmiOutputs.Parsed parsed = SmiOutputs.kunlunDevices(KUNLUN_2X_P800);
        assertThat(parsed.devices())
                .containsExactly(
                        new Device(0, "Kunlun P800 XPU", 98_304L, 1_024L),
                        new Device(1, "Kunlun P800 XPU", 98_304L, 80_640L));
    }

    @Test
    void recognisesIntelsXpuSmiAndRefusesIt() {
        assertThat(SmiOutputs.isIntelXpuSmi(INTEL_XPU_SMI)).isTrue();
        assertThat(SmiOutputs.isIntelXpuSmi(KUNLUN_2X_P800)).isFalse();
        assertThat(SmiOutputs.kunlunDevices(INTEL_XPU_SMI).problem()).contains("Intel");
    }

    @Test
    void shortXpuLinesAreNotKunlunOutput() {
        assertThat(SmiOutputs.kunlunDevices("0 P800 35C 1024 98304\n").problem())
                .contains("not Kunlun's device lines");
    }

    @Test
    void readsTheCpuModelName() {
        String cpuInfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n";
        assertThat(SmiOutputs.cpuModel(cpuInfo)).isEqualTo("AMD EPYC 7763 64-Core Processor");
        assertThat(SmiOutputs.cpuModel("processor\t: 0\nBogoMIPS\t: 50.00\n")).isNull();
    }
}
