package dev.ctxprobe.explore;

import java.util.List;
import java.util.OptionalLong;

/** Chooses the next target of one backend from the probes so far; sees nothing but step results. */
public interface Strategy {

    /** The next target to probe, or empty when this backend is done. */
    OptionalLong next(List<Probe> probes);
}
