package dev.ctxprobe.run;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.hardware.HostMemory;
import dev.ctxprobe.predict.PredictInputs;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.predict.Predictor;
import dev.ctxprobe.results.BackendPrediction;
import java.util.HashMap;
import java.util.Map;

/**
 * The predictions a run starts from, composed here so that {@code plan}, {@code validate}, {@code run --dry-run} and
 * the run itself predict the same way: the inputs given on the command line, the experiment file, and this machine's
 * accelerators.
 */
public final class Predictions {
    private Predictions() {}

    /** {@code given} with this machine's accelerators as the detected hardware, and its memory. */
    public static PredictInputs onThisMachine(PredictInputs given) {
        PredictInputs withHost = given.hostMemory() != null ? given : given.withHostMemory(HostMemory.read());
        return withHost.detected() != null
                ? withHost
                : withHost.withDetected(HardwareProbe.system().hardware());
    }

    /** Every backend's prediction and the sweep targets the model cannot serve. */
    public static Prediction of(Experiment e, PredictInputs inputs) {
        return Predictor.plan(e, inputs, Engines::sizing);
    }

    /** The plan of {@code e} whose frontier searches start from {@code prediction} ({@code start: plan}). */
    public static Plan plan(Experiment e, Prediction prediction) {
        Map<String, BackendPrediction> byName = new HashMap<>();
        prediction.backends().forEach(p -> byName.put(p.backend(), p));
        return Plan.of(e, b -> byName.get(b.name()));
    }
}
