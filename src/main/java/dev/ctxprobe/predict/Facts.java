package dev.ctxprobe.predict;

import dev.ctxprobe.results.Input;
import dev.ctxprobe.results.Missing;
import dev.ctxprobe.results.Source;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The inputs, missing inputs and assumptions one evaluation used, each named once, in the order met. */
final class Facts {
    private final Map<String, Input> inputs = new LinkedHashMap<>();
    private final Map<String, Missing> missing = new LinkedHashMap<>();
    private final Set<String> assumptions = new LinkedHashSet<>();
    private SurfacePrediction.Holds holds;

    void input(String name, String value, Source source, String where) {
        inputs.putIfAbsent(name, new Input(name, value, source, where));
    }

    void missing(String name, String how) {
        missing.putIfAbsent(name, new Missing(name, how));
    }

    void assume(String text) {
        assumptions.add(text);
    }

    /** What the engine holds for requests at once, as its rules size it (docs/plan.md#the-capacity-map). */
    void holds(SurfacePrediction.Holds h) {
        holds = h;
    }

    /** What the engine holds for requests at once; {@link SurfacePrediction.Holds#UNKNOWN} where not sized. */
    SurfacePrediction.Holds holds() {
        return holds == null ? SurfacePrediction.Holds.UNKNOWN : holds;
    }

    /** These facts followed by those of {@code other} that are not already here. */
    Facts plus(Facts other) {
        Facts all = new Facts();
        for (Facts f : List.of(this, other)) {
            f.inputs.values().forEach(i -> all.inputs.putIfAbsent(i.name(), i));
            f.missing.values().forEach(m -> all.missing.putIfAbsent(m.name(), m));
            all.assumptions.addAll(f.assumptions);
            if (f.holds != null) {
                all.holds = f.holds;
            }
        }
        return all;
    }

    List<Input> inputs() {
        return new ArrayList<>(inputs.values());
    }

    List<Missing> missing() {
        return new ArrayList<>(missing.values());
    }

    List<String> assumptions() {
        return new ArrayList<>(assumptions);
    }
}
