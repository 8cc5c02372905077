package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The real probe on the build machine, which has no accelerator tools. */
class SystemHardwareProbeTest {

    @Test
    void gpuLessMachineGivesACpuRecordWithoutThrowing() {
        assumeTrue(noAcceleratorTool(), "this machine has an accelerator tool on PATH");
        HardwareProbe probe = HardwareProbe.system();
        Hardware hw = probe.hardware();
        assertThat(hw.source()).isEqualTo("cpu");
        assertThat(hw.accelerator()).isEqualTo("cpu");
        assertThat(hw.chip()).isEqualTo("cpu");
        assertThat(hw.name()).startsWith("cpu: ").hasSizeGreaterThan("cpu: ".length());
        assertThat(hw.devices()).isEmpty();
        assertThat(probe.memoryUsed().available()).isFalse();
        assertThat(probe.computeProcesses().available()).isFalse();
        assertThat(probe.host()).isNotBlank();
    }

    private static boolean noAcceleratorTool() {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            for (String tool : new String[] {"nvidia-smi", "rocm-smi", "xpu-smi"}) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                    return false;
                }
            }
        }
        return true;
    }
}
