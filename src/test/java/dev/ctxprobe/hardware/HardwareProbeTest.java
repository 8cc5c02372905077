package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HardwareProbeTest {

    @TempDir
    Path dir;

    /** Answers recorded outputs by command; any other tool is not installed. */
    private static final class RecordedTools implements CommandRunner {
        private final Map<List<String>, CommandResult> answers = new HashMap<>();

        RecordedTools ok(List<String> command, String stdout) {
            answers.put(command, CommandResult.exited(command, 0, stdout, ""));
            return this;
        }

        RecordedTools answer(CommandResult result) {
            answers.put(result.command(), result);
            return this;
        }

        @Override
        public CommandResult run(List<String> command) {
            return answers.getOrDefault(command, CommandResult.failed(command, CommandResult.NOT_INSTALLED));
        }
    }

    private HardwareProbe probe(RecordedTools tools) throws IOException {
        Path cpuInfo = Files.writeString(
                dir.resolve("cpuinfo"), "processor\t: 0\nmodel name\t: AMD EPYC 7763 64-Core Processor\n");
        Path hostname = Files.writeString(dir.resolve("hostname"), "gpu-node-07\n");
        return new HardwareProbe(tools, cpuInfo, hostname);
    }

    @Test
    void nvidiaMachineIsNamedLikeTheSeeds() throws IOException {
        Hardware hw = probe(new RecordedTools().ok(HardwareProbe.NVIDIA_GPUS, SmiOutputsTest.NVIDIA_8X_H200))
                .hardware();
        assertThat(hw.name()).isEqualTo("8x NVIDIA H200 143GB");
        assertThat(hw.accelerator()).isEqualTo("NVIDIA H200");
        assertThat(hw.chip()).isEqualTo("nvidia_h200");
        assertThat(hw.source()).isEqualTo("nvidia-smi");
        assertThat(hw.devices()).hasSize(8);
        assertThat(hw.unknown()).isFalse();
    }

    @Test
    void mixedGpusAreListedPerKind() throws IOException {
        Hardware hw = probe(
                        new RecordedTools()
                                .ok(
                                        HardwareProbe.NVIDIA_GPUS,
                                        "0, NVIDIA H100 80GB HBM3, 81559, 0, 570.1\n1, NVIDIA GeForce RTX 4090, 24564, 0, 570.1\n"))
                .hardware();
        assertThat(hw.name()).isEqualTo("1x NVIDIA H100 80GB HBM3 81GB + 1x NVIDIA GeForce RTX 4090 24GB");
        assertThat(hw.chip()).isEqualTo("nvidia_h100_80gb_hbm3_nvidia_geforce_rtx_4090");
    }

    @Test
    void amdMachine() throws IOException {
        Hardware hw = probe(new RecordedTools()
                        .ok(HardwareProbe.ROCM_MEMORY, SmiOutputsTest.ROCM_MEMINFO)
                        .ok(HardwareProbe.ROCM_NAMES, SmiOutputsTest.ROCM_NAMES))
                .hardware();
        assertThat(hw.name()).isEqualTo("2x AMD Instinct MI300X OAM 196GB");
        assertThat(hw.chip()).isEqualTo("amd_instinct_mi300x_oam");
        assertThat(hw.source()).isEqualTo("rocm-smi");
    }

    @Test
    void kunlunMachineIsNamedLikeTheSeeds() throws IOException {
        String eight = SmiOutputsTest.KUNLUN_2X_P800.repeat(4);
        Hardware hw =
                probe(new RecordedTools().ok(HardwareProbe.XPU_MEMORY, eight)).hardware();
        assertThat(hw.name()).isEqualTo("8x Kunlun P800 XPU");
        assertThat(hw.accelerator()).isEqualTo("Kunlun P800 XPU");
        assertThat(hw.chip()).isEqualTo("kunlun_p800");
        assertThat(hw.source()).isEqualTo("xpu-smi");
    }

    @Test
    void intelXpuSmiGivesUnknownWithTheReason() throws IOException {
        List<String> cmd = HardwareProbe.XPU_MEMORY;
        Hardware hw = probe(
                        new RecordedTools().answer(new CommandResult(cmd, 1, "", SmiOutputsTest.INTEL_XPU_SMI, null)))
                .hardware();
        assertThat(hw.unknown()).isTrue();
        assertThat(hw.name()).isEqualTo("unknown");
        assertThat(hw.source()).isEqualTo("xpu-smi");
        assertThat(hw.unknownReason()).contains("Intel");
    }

    @Test
    void brokenDriverIsUnknownNotACpuMachine() throws IOException {
        List<String> cmd = HardwareProbe.NVIDIA_GPUS;
        HardwareProbe probe = probe(new RecordedTools()
                .answer(CommandResult.exited(
                        cmd, 9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", "")));
        Hardware hw = probe.hardware();
        assertThat(hw.unknown()).isTrue();
        assertThat(hw.chip()).isEqualTo("unknown");
        assertThat(hw.unknownReason())
                .isEqualTo("nvidia-smi: exit code 9 (NVIDIA-SMI has failed because it couldn't communicate with"
                        + " the NVIDIA driver.)");
        assertThat(probe.memoryUsed().available()).isFalse();
        assertThat(probe.memoryUsed().unavailableReason()).contains("exit code 9");
    }

    @Test
    void garbageAndTimeoutsAreUnknownWithTheirReasons() throws IOException {
        Hardware hw = probe(new RecordedTools()
                        .ok(HardwareProbe.NVIDIA_GPUS, "%%% garbage %%%")
                        .answer(CommandResult.failed(HardwareProbe.ROCM_MEMORY, "no answer within 5000 ms")))
                .hardware();
        assertThat(hw.unknownReason())
                .isEqualTo("unexpected nvidia-smi output: %%% garbage %%%; rocm-smi: no answer within 5000 ms");
        assertThat(hw.source()).isEqualTo("nvidia-smi");
    }

    @Test
    void noToolAtAllIsACpuMachine() throws IOException {
        HardwareProbe probe = probe(new RecordedTools());
        Hardware hw = probe.hardware();
        assertThat(hw)
                .isEqualTo(new Hardware("cpu: AMD EPYC 7763 64-Core Processor", "cpu", "cpu", List.of(), "cpu", null));
        assertThat(probe.memoryUsed().unavailableReason()).contains("no accelerator query tool is installed");
        assertThat(probe.computeProcesses().unavailableReason())
                .isEqualTo("nvidia-smi: not installed (not on PATH); only nvidia-smi lists compute processes");
        assertThat(probe.computePids()).isEmpty();
        assertThat(probe.host()).isEqualTo("gpu-node-07");
    }

    @Test
    void memoryAndComputeProcessesOfAnNvidiaMachine() throws IOException {
        HardwareProbe probe = probe(new RecordedTools()
                .ok(HardwareProbe.NVIDIA_GPUS, SmiOutputsTest.NVIDIA_8X_H200)
                .ok(HardwareProbe.NVIDIA_APPS, "4242, 130508\n"));
        MemorySnapshot memory = probe.memoryUsed();
        assertThat(memory.available()).isTrue();
        assertThat(memory.source()).isEqualTo("nvidia-smi");
        assertThat(memory.devices())
                .extracting(Device::memUsedMiB)
                .containsExactly(4L, 4L, 4L, 4L, 4L, 4L, 4L, 130_512L);
        assertThat(probe.computePids()).containsExactly(4242L);
    }
}
