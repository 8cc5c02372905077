package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import java.util.List;
import java.util.OptionalLong;

/** Chooses the next target of one backend from the probes so far; sees nothing but step results. */
public interface Strategy {

    /** The next target to probe, or empty when this backend is done. */
    OptionalLong next(List<Probe> probes);

    /** The answer the probes give: {@link Frontier#of} with the most recent capacity hint as the prediction. */
    static Frontier answer(List<Probe> probes, long pad, long promptAllowance) {
        Long predicted = null;
        for (Probe p : probes) {
            Long hinted = p.hintTarget(pad, promptAllowance);
            if (hinted != null) {
                predicted = hinted;
            }
        }
        return Frontier.of(probes.stream().map(Probe::attempt).toList()).withPredictedMax(predicted);
    }
}
