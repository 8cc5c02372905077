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

    /**
     * The tables of this run's matrix cells (docs/results.md#matrix), parameters and values in the experiment's
     * order as {@code config.matrix} records it; empty for a run without a matrix.
     */
    public List<MatrixGrid> grids() {
        Map<String, Map<String, String>> cells = new LinkedHashMap<>();
        scenarios.forEach(s -> {
            if (!s.params().isEmpty()) {
                cells.putIfAbsent(s.backend(), s.params());
            }
        });
        frontier.forEach((name, f) -> {
            if (!f.params().isEmpty()) {
                cells.putIfAbsent(name, f.params());
            }
        });
        return MatrixGrid.of(
                cells.entrySet().stream()
                        .map(c -> new MatrixGrid.Cell(c.getKey(), c.getValue()))
                        .toList(),
                matrixOrder());
    }

    // config.matrix as written; a hand-edited value of another shape orders nothing.
    private Map<String, Map<String, List<String>>> matrixOrder() {
        Map<String, Map<String, List<String>>> order = new LinkedHashMap<>();
        if (!(config.get("matrix") instanceof Map<?, ?> bases)) {
            return order;
        }
        bases.forEach((base, params) -> {
            if (params instanceof Map<?, ?> ps) {
                Map<String, List<String>> own = new LinkedHashMap<>();
                ps.forEach((k, vs) -> {
                    if (vs instanceof List<?> list) {
                        own.put(
                                String.valueOf(k),
                                list.stream().map(String::valueOf).toList());
                    }
                });
                order.put(String.valueOf(base), own);
            }
        });
        return order;
    }
}
