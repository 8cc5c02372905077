package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One results file as a report sees it: where it came from, its metadata, its steps in execution order
 * and one frontier per backend (from the file, or derived from the steps).
 *
 * @param source the path of the file as the user named it, shown in reports
 */
public record ResultSet(String source, RunInfo run, List<ScenarioRow> scenarios, List<FrontierSummary> frontiers) {

    public ResultSet {
        scenarios = List.copyOf(scenarios);
        frontiers = List.copyOf(frontiers);
    }

    /** The backends in the order the file first mentions them (steps, then frontier entries). */
    public List<String> backends() {
        Set<String> names = new LinkedHashSet<>();
        scenarios.forEach(s -> names.add(s.backend()));
        frontiers.forEach(f -> names.add(f.backend()));
        return new ArrayList<>(names);
    }

    /** The steps of one backend, in execution order. */
    public List<ScenarioRow> scenariosOf(String backend) {
        return scenarios.stream().filter(s -> s.backend().equals(backend)).toList();
    }

    /** The last step of a backend at a target with the given success (a resumed run may repeat one). */
    public Optional<ScenarioRow> step(String backend, long target, boolean success) {
        return scenariosOf(backend).stream()
                .filter(s -> s.targetLen() == target && s.success() == success && s.launched())
                .reduce((first, second) -> second);
    }
}
