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
        Metadata metadata, Map<String, Object> config, List<Scenario> scenarios, Map<String, Frontier> frontier) {

    public ResultDocument {
        config = config == null ? new LinkedHashMap<>() : new LinkedHashMap<>(config);
        scenarios = scenarios == null ? List.of() : List.copyOf(scenarios);
        frontier = frontier == null ? new LinkedHashMap<>() : new LinkedHashMap<>(frontier);
    }

    public ResultDocument withScenario(Scenario s) {
        List<Scenario> all = new ArrayList<>(scenarios);
        all.add(s);
        return new ResultDocument(metadata, config, all, frontier);
    }

    /** The document with step {@code index} (in execution order) replaced, e.g. by what its server's stop showed. */
    public ResultDocument withScenarioAt(int index, Scenario s) {
        List<Scenario> all = new ArrayList<>(scenarios);
        all.set(index, s);
        return new ResultDocument(metadata, config, all, frontier);
    }

    public ResultDocument withFrontier(String backend, Frontier f) {
        Map<String, Frontier> all = new LinkedHashMap<>(frontier);
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

    /** The steps of one series (a backend's cell at one concurrency), in execution order. */
    public List<Scenario> series(Point.Series series) {
        return scenarios.stream().filter(s -> s.point().series().equals(series)).toList();
    }

    /** The document without the steps a Ctrl-C cut short: {@code --resume} runs them again. */
    public ResultDocument withoutInterrupted() {
        return new ResultDocument(
                metadata,
                config,
                scenarios.stream().filter(s -> !s.outcome().interrupted()).toList(),
                frontier);
    }
}
