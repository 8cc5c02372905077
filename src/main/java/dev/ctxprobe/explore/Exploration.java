package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Runs a plan's backends, one after the other or up to {@code parallel} at once ({@link BackendTurns}): per
 * backend, the strategy proposes a point, the {@link ServerPolicy} runs it on a server it launches or keeps, the
 * {@link Recorder} saves it, and the probe goes back to the strategy, until the strategy is done. Backends that run
 * at once share nothing but the recorder, which keeps the document whole.
 */
public final class Exploration {
    private final Plan plan;
    private final Experiment experiment;
    private final Function<Backend, Launcher> launchers;
    private final StepRunner steps;
    private final Recorder recorder;
    private final RunListener listener;
    private final int parallel;

    /**
     * @param launchers the launcher of each backend's servers (asked from several threads when {@code parallel} is
     *     above 1)
     * @param logs where and under which names the servers' logs go
     * @param recorder holds the document to continue (a new run's, or an earlier one for {@code --resume}: finished
     *     steps are kept, an interrupted step runs again) and saves every step
     * @param parallel how many backends may be explored at once; backends with the same fixed port, or that their
     *     launcher says cannot run together (the same accelerators), still take turns
     * @param client how the steps talk to a ready server
     */
    public Exploration(
            Plan plan,
            Function<Backend, Launcher> launchers,
            StepLogs logs,
            Recorder recorder,
            RunListener listener,
            int parallel,
            ServerClient client) {
        if (parallel < 1) {
            throw new IllegalArgumentException("parallel is 1 or more, not " + parallel);
        }
        this.plan = plan;
        this.experiment = plan.experiment();
        this.launchers = launchers;
        this.steps = new StepRunner(experiment, launchers, logs, listener, client);
        this.recorder = recorder;
        this.listener = listener;
        this.parallel = parallel;
    }

    /** Thrown when the user stops the run; the recorder holds the document with the interrupted step. */
    public static final class Interrupted extends Exception {
        private static final long serialVersionUID = 1L;

        Interrupted() {
            super("interrupted");
        }
    }

    /** Thrown when a resumed folder's steps do not fit its experiment (a hand-edited file). */
    public static final class ResumeMismatch extends Exception {
        private static final long serialVersionUID = 1L;

        ResumeMismatch(String message) {
            super(message);
        }
    }

    /** Explores every backend of the plan and returns the final document. */
    public ResultDocument run() throws Interrupted, ResumeMismatch {
        recorder.update(ResultDocument::withoutInterrupted);
        // Every resumed backend is checked before any is launched: a mismatch must not leave others half run.
        Map<Plan.BackendPlan, List<Probe>> earlier = new LinkedHashMap<>();
        for (Plan.BackendPlan b : plan.backends()) {
            earlier.put(b, earlierProbes(b));
        }
        if (parallel == 1 || earlier.size() == 1) {
            for (Map.Entry<Plan.BackendPlan, List<Probe>> b : earlier.entrySet()) {
                explore(b.getKey(), b.getValue());
            }
        } else {
            new BackendTurns(List.copyOf(earlier.keySet()), launchers).run(parallel, b -> explore(b, earlier.get(b)));
        }
        return recorder.document();
    }

    private void explore(Plan.BackendPlan bp, List<Probe> earlier) throws Interrupted {
        Backend backend = bp.backend();
        Strategy strategy = bp.strategy();
        List<Probe> probes = new ArrayList<>(earlier);
        ServerPolicy servers = new ServerPolicy(bp, experiment, steps, recorder);
        try {
            Optional<Point> next;
            while ((next = strategy.next(probes)).isPresent()) {
                // A Ctrl-C that came while the last step's server was stopping cut that stop short; it must not
                // launch another server only to interrupt it.
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted between steps");
                }
                Point point = next.get();
                listener.stepStarting(backend.name(), point.target(), point.target() + experiment.contextPad());
                Scenario s;
                try {
                    s = strategy.selfSizes(point, probes)
                            ? steps.runSelfSized(
                                    backend,
                                    bp.profile(),
                                    point,
                                    fitted -> strategy.selfSizedTarget(fitted, point.target()))
                            : servers.step(point);
                } catch (RuntimeException | Error e) {
                    servers.close();
                    s = StepRecords.clientError(
                            point, steps.command(backend, point.target()), null, null, Phase.PREFLIGHT, e);
                }
                record(s, servers);
                probes.add(probe(s, bp.profile()));
            }
        } catch (StepRunner.StepInterrupted e) {
            record(e.scenario(), servers);
            servers.close();
            recordAnswer(bp, probes, servers, Frontier.INTERRUPTED);
            throw new Interrupted();
        } catch (InterruptedException e) {
            servers.close();
            recordAnswer(bp, probes, servers, Frontier.INTERRUPTED);
            throw new Interrupted();
        } finally {
            servers.close();
        }
        recordSkipped(bp, probes, servers);
        ResultDocument doc = recordAnswer(bp, probes, servers, null);
        listener.backendFinished(backend.name(), doc.frontier().get(backend.name()), doc);
    }

    // The points the strategy will never probe, each recorded once as skipped with the failure that stopped it.
    private void recordSkipped(Plan.BackendPlan bp, List<Probe> probes, ServerPolicy servers) {
        List<Point> skipped = bp.strategy().skipped(probes);
        if (skipped.isEmpty()) {
            return;
        }
        List<Scenario> done = recorder.document().series(bp.strategy().series());
        Set<Point> recorded = new HashSet<>();
        done.forEach(s -> recorded.add(s.point()));
        Scenario because =
                done.stream().filter(s -> s.outcome().failed()).findFirst().orElseThrow();
        for (Point point : skipped) {
            if (!recorded.contains(point)) {
                record(StepRecords.skipped(point, steps.command(bp.backend(), point.target()), because), servers);
            }
        }
    }

    private void record(Scenario s, ServerPolicy servers) {
        int[] index = new int[1];
        ResultDocument doc = recorder.update(d -> {
            index[0] = d.scenarios().size();
            return d.withScenario(s);
        });
        servers.recorded(s, index[0]);
        // The step as saved, secrets masked, is what listeners see.
        listener.stepFinished(doc.scenarios().get(index[0]), doc);
    }

    // The probes of finished steps (on --resume), checked against the strategy before anything is launched.
    private List<Probe> earlierProbes(Plan.BackendPlan bp) throws ResumeMismatch {
        List<Probe> probes = new ArrayList<>();
        for (Scenario s : recorder.document().series(bp.strategy().series())) {
            if (s.outcome().launched()) {
                probes.add(probe(s, bp.profile()));
            }
        }
        Optional<String> mismatch = bp.strategy().resumeMismatch(probes);
        if (mismatch.isPresent()) {
            throw new ResumeMismatch(mismatch.get());
        }
        return probes;
    }

    private ResultDocument recordAnswer(Plan.BackendPlan bp, List<Probe> probes, ServerPolicy servers, String stopped) {
        String name = bp.backend().name();
        return recorder.update(d -> {
            Frontier f = bp.answer(probes)
                    .withLaunches(launches(d.series(bp.strategy().series())) + servers.unrecordedLaunches())
                    .producedBy(
                            experiment.sweep().strategy().id(),
                            experiment.sweep().restart().name().toLowerCase(Locale.ROOT));
            return d.withFrontier(name, stopped == null ? f : f.withStoppedBecause(stopped));
        });
    }

    // Servers that really started: each has its own id, shared by the steps a kept server answered.
    private static int launches(List<Scenario> steps) {
        Set<String> ids = new LinkedHashSet<>();
        for (Scenario s : steps) {
            String id = serverId(s);
            if (id != null) {
                ids.add(id);
            }
        }
        return ids.size();
    }

    // Files written before servers had ids name them by pid.
    private static String serverId(Scenario s) {
        if (s.server() == null) {
            return null;
        }
        if (s.server().id() != null) {
            return s.server().id();
        }
        return s.server().pid() == null ? null : "local:" + s.server().pid();
    }

    /**
     * What the search learns from a recorded step: its hint (the length the engine named, else a KV capacity where
     * the engine's KV figure bounds a request), what the hint limits (as recorded, else the profile's kind), and
     * whether it timed out at a capacity the server stated.
     */
    static Probe probe(Scenario s, EngineProfile profile) {
        Scenario.Server server = s.server();
        if (server == null) {
            return new Probe(s.targetLen(), s.outcome(), null, null);
        }
        Long hint = null;
        HintKind kind = null;
        if (server.maxContextHint() != null) {
            hint = server.maxContextHint();
            kind = server.hintKind() != null ? server.hintKind() : profile.hintKind();
        } else if (server.kvCapacityTokens() != null && profile.kvCapacitySteers()) {
            hint = server.kvCapacityTokens();
            kind = profile.hintKind();
        }
        boolean hang = s.outcome().failure().orElse(null) == FailureClass.TIMEOUT
                && server.capacity() != null
                && server.capacity().near(s.targetLen());
        return new Probe(s.targetLen(), s.outcome(), hint, kind, hang);
    }
}
