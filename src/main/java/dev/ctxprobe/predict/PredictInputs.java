package dev.ctxprobe.predict;

import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.hardware.HostMemory;
import java.nio.file.Path;

/**
 * What a prediction may use besides the experiment file: the detected machine and values given on ctxprobe's own
 * command line, which win over the file.
 *
 * @param detected the machine as {@code HardwareProbe} saw it; null when it was not asked
 * @param modelConfig a {@code config.json} for every backend ({@code --model-config}); null when not given
 * @param weightsGib the model's weights in GiB; null when not given
 * @param devices accelerators on the machine; null when not given
 * @param memoryGib memory of one accelerator in GiB; null when not given
 * @param hostMemory the host's memory (what a CPU build keeps its KV cache in); null when not read
 */
public record PredictInputs(
        Hardware detected,
        Path modelConfig,
        Double weightsGib,
        Integer devices,
        Double memoryGib,
        HostMemory.Reading hostMemory) {

    /** Nothing detected and nothing given: the experiment file alone. */
    public static PredictInputs none() {
        return new PredictInputs(null, null, null, null, null, null);
    }

    public PredictInputs withDetected(Hardware hardware) {
        return new PredictInputs(hardware, modelConfig, weightsGib, devices, memoryGib, hostMemory);
    }

    public PredictInputs withModelConfig(Path file) {
        return new PredictInputs(detected, file, weightsGib, devices, memoryGib, hostMemory);
    }

    public PredictInputs withWeightsGib(Double gib) {
        return new PredictInputs(detected, modelConfig, gib, devices, memoryGib, hostMemory);
    }

    public PredictInputs withHardware(Integer deviceCount, Double gibPerDevice) {
        return new PredictInputs(detected, modelConfig, weightsGib, deviceCount, gibPerDevice, hostMemory);
    }

    public PredictInputs withHostMemory(HostMemory.Reading reading) {
        return new PredictInputs(detected, modelConfig, weightsGib, devices, memoryGib, reading);
    }
}
