package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.hardware.CommandResult;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.results.FailureClass;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GPU hygiene on recorded nvidia-smi answers: memory that does not come back fails the next launch as gpu_busy. */
class GpuHygieneTest {
    @TempDir
    Path dir;

    private final AtomicReference<String> gpus =
            new AtomicReference<>("0, NVIDIA H200, 143771, 512, 550.54\n1, NVIDIA H200, 143771, 512, 550.54\n");

    private HardwareProbe probe() throws Exception {
        Path cpu = Files.writeString(dir.resolve("cpuinfo"), "model name\t: test\n");
        Path host = Files.writeString(dir.resolve("hostname"), "node\n");
        return new HardwareProbe(
                command -> {
                    String joined = String.join(" ", command);
                    if (joined.startsWith("nvidia-smi --query-gpu")) {
                        return CommandResult.exited(command, 0, gpus.get(), "");
                    }
                    if (joined.startsWith("nvidia-smi --query-compute-apps")) {
                        return CommandResult.exited(command, 0, "4242, 90000\n", "");
                    }
                    return CommandResult.failed(command, CommandResult.NOT_INSTALLED);
                },
                cpu,
                host);
    }

    @Test
    void memoryBackAtBaselinePasses() throws Exception {
        GpuHygiene gpu = new GpuHygiene(probe());
        assertThat(gpu.preflight(Map.of(), Duration.ZERO)).isEmpty();
        assertThat(gpu.usedMiB()).containsExactly(512L, 512L);
    }

    @Test
    void memoryStillHeldIsGpuBusyNamingTheHolders() throws Exception {
        GpuHygiene gpu = new GpuHygiene(probe());
        gpus.set("0, NVIDIA H200, 143771, 512, 550.54\n1, NVIDIA H200, 143771, 90512, 550.54\n");

        Refusal f = gpu.preflight(Map.of(), Duration.ZERO).orElseThrow();

        assertThat(f.failureClass()).isEqualTo(FailureClass.GPU_BUSY);
        assertThat(f.detail()).contains("4242");
        assertThat(f.evidence()).anySatisfy(l -> assertThat(l).contains("90512"));
    }

    @Test
    void onlyTheBackendsVisibleDevicesCount() throws Exception {
        GpuHygiene gpu = new GpuHygiene(probe());
        gpus.set("0, NVIDIA H200, 143771, 512, 550.54\n1, NVIDIA H200, 143771, 90512, 550.54\n");

        assertThat(gpu.preflight(Map.of("CUDA_VISIBLE_DEVICES", "0"), Duration.ZERO))
                .isEmpty();
        assertThat(gpu.preflight(Map.of("CUDA_VISIBLE_DEVICES", "0,1"), Duration.ZERO))
                .isPresent();
    }

    @Test
    void withoutAnAcceleratorQueryNothingIsChecked() throws Exception {
        GpuHygiene gpu = new GpuHygiene(new HardwareProbe(
                c -> CommandResult.failed(c, CommandResult.NOT_INSTALLED),
                Files.writeString(dir.resolve("c"), "model name\t: x\n"),
                Files.writeString(dir.resolve("h"), "h\n")));
        assertThat(gpu.preflight(Map.of(), Duration.ZERO)).isEmpty();
        assertThat(gpu.usedMiB()).isNull();
    }

    @Test
    void onAMachineWithAcceleratorsServersRunTogetherOnlyOnDevicesOfTheirOwn() throws Exception {
        LocalLauncher launcher = new LocalLauncher(null, probe());
        assertThat(launcher.canRunTogether(Map.of(), Map.of())).isFalse();
        assertThat(launcher.canRunTogether(Map.of("CUDA_VISIBLE_DEVICES", "0"), Map.of("CUDA_VISIBLE_DEVICES", "0,1")))
                .isFalse();
        assertThat(launcher.canRunTogether(Map.of("CUDA_VISIBLE_DEVICES", "0"), Map.of("CUDA_VISIBLE_DEVICES", "1")))
                .isTrue();
    }

    @Test
    void onACpuMachineServersRunTogether() throws Exception {
        // issue 31: --parallel 2 took turns on a CPU machine, as if the unset CUDA_VISIBLE_DEVICES shared a device.
        LocalLauncher launcher = new LocalLauncher(
                null,
                new HardwareProbe(
                        c -> CommandResult.failed(c, CommandResult.NOT_INSTALLED),
                        Files.writeString(dir.resolve("c"), "model name\t: x\n"),
                        Files.writeString(dir.resolve("h"), "h\n")));
        assertThat(launcher.canRunTogether(Map.of(), Map.of())).isTrue();
    }
}
