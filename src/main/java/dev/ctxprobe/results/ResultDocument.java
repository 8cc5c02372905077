package dev.ctxprobe.results;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The whole {@code results.json}: the seeds' three keys ({@code metadata}, {@code config}, {@code scenarios})
 * and ctxprobe's {@code frontier}, one entry per backend.
 *
 * @param config the seeds' config keys (every var, the visible-devices variable, the load) plus additions
 */
public record ResultDocument(
        Metadata metadata, Map<String, Object> config, List<Scenario> scenarios, Map<String, FrontierEntry> frontier) {

    public ResultDocument {
        config = new LinkedHashMap<>(config);
        scenarios = List.copyOf(scenarios);
        frontier = new LinkedHashMap<>(frontier);
    }

    public ResultDocument withScenario(Scenario s) {
        List<Scenario> all = new ArrayList<>(scenarios);
        all.add(s);
        return new ResultDocument(metadata, config, all, frontier);
    }

    public ResultDocument withFrontier(String backend, FrontierEntry f) {
        Map<String, FrontierEntry> all = new LinkedHashMap<>(frontier);
        all.put(backend, f);
        return new ResultDocument(metadata, config, scenarios, all);
    }

    public ResultDocument withMetadata(Metadata m) {
        return new ResultDocument(m, config, scenarios, frontier);
    }

    /** The steps of one backend, in execution order. */
    public List<Scenario> scenariosOf(String backend) {
        return scenarios.stream().filter(s -> s.backend().equals(backend)).toList();
    }
}
