package dev.ctxprobe.report;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Roofline;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.roofline.Floors;
import dev.ctxprobe.roofline.StepRoofline;
import java.util.ArrayList;
import java.util.List;

/**
 * The "% of roofline" of steps whose file does not carry it (the seeds, files written before it was recorded),
 * worked out from what the file names: the floor beside a backend's prediction, else the model, accelerator and
 * devices of its metadata (docs/results.md, "% of roofline").
 */
final class Rooflines {
    private Rooflines() {}

    /** The floor of one backend of {@code d}. */
    static PrefillFloor floor(ResultDocument d, String backend) {
        Frontier f = d.frontier().get(backend);
        BackendPrediction p = f == null ? null : f.predicted();
        if (p != null && p.prefillFloor() != null) {
            return p.prefillFloor();
        }
        return Floors.ofResults(d.metadata(), d.config());
    }

    /** {@code d} with every measured step's roofline, computed where the file has none. */
    static ResultDocument filled(ResultDocument d) {
        if (d.scenarios().stream()
                .allMatch(s -> s.roofline() != null || !s.outcome().passed())) {
            return d;
        }
        List<Scenario> steps = new ArrayList<>();
        for (Scenario s : d.scenarios()) {
            steps.add(s.roofline() != null ? s : StepRoofline.judged(floor(d, s.backend()), s));
        }
        ResultDocument filled = d;
        for (int i = 0; i < steps.size(); i++) {
            filled = filled.withScenarioAt(i, steps.get(i));
        }
        return filled;
    }

    /** The title of the section that lists every measured step under each assumption. */
    static final String TITLE =
            "% of roofline: the prefill floor over the mean TTFT, under each assumption" + " (docs/results.md)";

    /**
     * One line per measured step of {@code d} under each assumption; a floor unknown for every step is said once.
     * Empty when no step has a roofline.
     */
    static List<String> lines(ResultDocument d) {
        List<Scenario> measured =
                d.scenarios().stream().filter(s -> s.roofline() != null).toList();
        List<String> lines = new ArrayList<>();
        if (measured.isEmpty()) {
            return lines;
        }
        if (measured.stream().allMatch(s -> s.roofline().percent() == null)) {
            java.util.Set<String> why = new java.util.LinkedHashSet<>();
            measured.forEach(s ->
                    why.add(s.backend() + ": floor unknown: " + s.roofline().unknown()));
            lines.addAll(why);
            return lines;
        }
        for (Scenario s : measured) {
            lines.add(String.format(
                            java.util.Locale.ROOT,
                            "%s %s  TTFT %.3f s  ",
                            s.backend(),
                            StepFacts.target(s.targetLen(), s.concurrency()),
                            s.metrics().ttftMs().mean() / 1000)
                    + String.join("; ", assumptions(s)));
        }
        return lines;
    }

    /** The lines that show a step under each assumption: {@code FP8, linear+attention: 69.0% (floor 2.175 s)}. */
    static List<String> assumptions(Scenario s) {
        Roofline r = s.roofline();
        List<String> lines = new ArrayList<>();
        if (r == null) {
            return lines;
        }
        if (r.percent() == null) {
            lines.add("floor unknown: " + r.unknown());
            return lines;
        }
        for (Roofline.Floor f : r.floors()) {
            lines.add(String.format(
                    java.util.Locale.ROOT,
                    "%s, %s: %s%s (floor %.3f s)",
                    f.dtype().toUpperCase(java.util.Locale.ROOT),
                    f.counted(),
                    PrefillFloor.percent(f.percent()),
                    Roofline.PLAUSIBLE.equals(f.flag()) ? "" : " " + f.flag(),
                    f.floorS()));
        }
        return lines;
    }
}
