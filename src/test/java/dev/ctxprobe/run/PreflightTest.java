package dev.ctxprobe.run;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.hardware.Device;
import dev.ctxprobe.hardware.Hardware;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PreflightTest {
    private static final Experiment.HardwareSpec H200S =
            new Experiment.HardwareSpec("8x NVIDIA H200 143GB", "NVIDIA H200", "nvidia_h200", null, null);

    private static Hardware gpus(int n, String name) {
        List<Device> devices = IntStream.range(0, n)
                .mapToObj(i -> new Device(i, name, 143_771L, 0L))
                .toList();
        return new Hardware(n + "x " + name + " 143GB", name, "x", devices, "nvidia-smi", null);
    }

    @Test
    void theDeclaredMachineIsNoWarning() {
        assertThat(Preflight.hardwareMismatch(H200S, gpus(8, "NVIDIA H200"))).isEmpty();
        assertThat(Preflight.hardwareMismatch(
                        new Experiment.HardwareSpec("8x NVIDIA H200 143GB", null, null, null, null),
                        gpus(8, "NVIDIA H200")))
                .as("the accelerator read from the name")
                .isEmpty();
    }

    @Test
    void anotherAcceleratorOrAnotherCountIsAWarning() {
        Hardware cpu = new Hardware("cpu: Intel Xeon", "cpu", "cpu", List.of(), "cpu", null);
        assertThat(Preflight.hardwareMismatch(H200S, cpu))
                .hasValue("the experiment declares hardware '8x NVIDIA H200 143GB' but this machine has cpu: Intel"
                        + " Xeon; the results will record the declared hardware (remove 'hardware:' to record what is"
                        + " detected)");
        assertThat(Preflight.hardwareMismatch(H200S, gpus(4, "NVIDIA H200"))).isPresent();
        assertThat(Preflight.hardwareMismatch(
                        new Experiment.HardwareSpec(null, "NVIDIA H200", null, 8, 141.0), gpus(4, "NVIDIA H200")))
                .as("the count from hardware.devices")
                .isPresent();
        assertThat(Preflight.hardwareMismatch(H200S, gpus(8, "NVIDIA A100-SXM4-80GB")))
                .isPresent();
    }

    @Test
    void hardwareThatCannotBeReadIsSaidSo() {
        Hardware broken = new Hardware("unknown", "unknown", "unknown", List.of(), "nvidia-smi", "driver mismatch");
        assertThat(Preflight.hardwareMismatch(H200S, broken))
                .hasValue("the experiment declares hardware '8x NVIDIA H200 143GB', which cannot be checked here"
                        + " (driver mismatch); the results will record it as declared");
    }

    @Test
    void programsAreFoundOnPathLikeAShellFindsThem(@TempDir Path dir) throws Exception {
        Path bin = Files.createDirectory(dir.resolve("bin"));
        Path tool = Files.writeString(bin.resolve("tool"), "#!/bin/sh\n");
        assertThat(Preflight.find("tool", dir + ":" + bin))
                .as("not executable yet")
                .isNull();
        assertThat(tool.toFile().setExecutable(true)).isTrue();
        assertThat(Preflight.find("tool", dir + ":" + bin)).isEqualTo(tool);
        assertThat(Preflight.find("tool", "")).isNull();
    }

    @Test
    void aMissingOutputFolderIsWritableWhenItsParentIs(@TempDir Path dir) throws Exception {
        assertThat(Preflight.writable(dir.resolve("a/b/c"))).isEmpty();
        assertThat(dir.resolve("a")).as("nothing is created by the check").doesNotExist();
        try (var left = Files.list(dir)) {
            assertThat(left).as("the probe file is deleted").isEmpty();
        }
    }
}
