package dev.ctxprobe.predict;

import dev.ctxprobe.results.BackendPrediction;
import java.util.List;

/**
 * The predictions for every backend of one experiment, and the sweep targets that cannot fit the model.
 *
 * @param file the experiment file, as given
 */
public record Prediction(
        String experiment, String file, List<BackendPrediction> backends, List<TargetWarning> warnings) {

    public Prediction {
        backends = List.copyOf(backends);
        warnings = List.copyOf(warnings);
    }
}
