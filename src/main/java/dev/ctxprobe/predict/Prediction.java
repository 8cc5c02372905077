package dev.ctxprobe.predict;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.MatrixGrid;
import java.util.List;

/**
 * The predictions for every backend of one experiment, and the sweep targets that cannot fit the model.
 *
 * @param file the experiment file, as given
 * @param grids the experiment's matrix cells laid out as tables (docs/results.md#matrix); empty without a matrix
 */
public record Prediction(
        String experiment,
        String file,
        List<BackendPrediction> backends,
        List<TargetWarning> warnings,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<MatrixGrid> grids) {

    public Prediction {
        backends = List.copyOf(backends);
        warnings = List.copyOf(warnings);
        grids = List.copyOf(grids);
    }

    /** The prediction of the backend named {@code name}, or null. */
    public BackendPrediction of(String name) {
        return backends.stream()
                .filter(b -> b.backend().equals(name))
                .findFirst()
                .orElse(null);
    }
}
