package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.predict.PredictInputs;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.run.Predictions;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The inputs of a prediction given on the command line, shared by {@code plan}, {@code validate} and {@code run}:
 * each wins over the experiment file and over what is detected on this machine.
 */
final class PredictionOptions {
    @Option(
            names = "--model-config",
            paramLabel = "FILE",
            description = "The model's config.json for every backend (instead of model_config or {model}/config.json).")
    Path modelConfig;

    @Option(
            names = "--weights-gib",
            paramLabel = "GIB",
            description = "The model's weights in GiB (instead of weights_gib or the safetensors index).")
    Double weightsGib;

    @Option(
            names = "--devices",
            paramLabel = "N",
            description = "Accelerators on the machine that serves (instead of hardware.devices or detection).")
    Integer devices;

    @Option(
            names = "--memory-gib",
            paramLabel = "GIB",
            description = "Memory of one accelerator in GiB (instead of hardware.memory_gib or detection).")
    Double memoryGib;

    /** What {@code e}'s backends will serve on this machine, with these inputs winning over the file and detection. */
    Prediction predict(Experiment e) {
        return Predictions.of(e, Predictions.onThisMachine(inputs()));
    }

    /** The inputs as given; a value that cannot be right is refused with one sentence (exit code 2). */
    PredictInputs inputs() {
        if (modelConfig != null && !Files.isRegularFile(modelConfig)) {
            throw ExitException.usage(
                    "--model-config " + modelConfig + " is no file: give the path of the model's config.json");
        }
        if (weightsGib != null && !(weightsGib >= 0 && Double.isFinite(weightsGib))) {
            throw ExitException.usage(
                    "--weights-gib is the size of the weights in GiB, 0 or more, e.g. --weights-gib 152.5");
        }
        if (devices != null && devices < 1) {
            throw ExitException.usage("--devices is the number of accelerators, 1 or more, e.g. --devices 8");
        }
        if (memoryGib != null && !(memoryGib > 0 && Double.isFinite(memoryGib))) {
            throw ExitException.usage("--memory-gib is the memory of one accelerator in GiB, e.g. --memory-gib 141");
        }
        PredictInputs inputs = PredictInputs.none().withModelConfig(modelConfig).withWeightsGib(weightsGib);
        return devices == null && memoryGib == null ? inputs : inputs.withHardware(devices, memoryGib);
    }
}
