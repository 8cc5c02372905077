package dev.ctxprobe.predict;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ExperimentLoader;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.run.Experiments;
import java.net.URISyntaxException;
import java.nio.file.Path;

/** Experiments as the CLI loads them, and the model configs copied from the real checkpoints. */
final class Fixtures {
    private static final ExperimentLoader LOADER = Experiments.loader();

    /** DeepSeek-V4-Flash's config as shipped beside the seeds' experiments (docs/plan.md). */
    static final Path V4_FLASH = Path.of("experiments/models/deepseek-v4-flash.config.json");

    private Fixtures() {}

    /** A shipped experiment file, e.g. {@code experiments/dsv4-h200.yaml}. */
    static Experiment experiment(String file) throws ExperimentError {
        return LOADER.load(Path.of(file));
    }

    static Experiment parse(Path file, String yaml) throws ExperimentError {
        return LOADER.parse(file, yaml);
    }

    /** A file of src/test/resources/dev/ctxprobe/predict. */
    static Path resource(String name) {
        try {
            return Path.of(Fixtures.class.getResource(name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static BackendPrediction backend(Prediction plan, String name) {
        return plan.backends().stream()
                .filter(b -> b.backend().equals(name))
                .findFirst()
                .orElseThrow();
    }
}
