package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.launch.ExternalLauncher;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.predict.SurfacePrediction;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import dev.ctxprobe.roofline.StepRoofline;
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
        // A resumed run's steps hold their backends' pass-key controls: it does not ask them again.
        this.steps = new StepRunner(
                experiment,
                launchers,
                logs,
                listener,
                client,
                PasskeyCheck.resumed(recorder.document().scenarios()));
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
            new BackendTurns(List.copyOf(earlier.keySet()), launchers, listener)
                    .run(parallel, b -> explore(b, earlier.get(b)));
        }
        return recorder.document();
    }

    private void explore(Plan.BackendPlan planned, List<Probe> earlier) throws Interrupted {
        Plan.BackendPlan bp = withinStated(fromTwin(planned));
        Backend backend = bp.backend();
        Strategy strategy = bp.strategy();
        List<Probe> probes = new ArrayList<>(earlier);
        ServerPolicy servers = new ServerPolicy(bp, experiment, steps, recorder);
        List<Frontier.Surface> surface = List.of();
        try {
            Optional<Point> next;
            while ((next = strategy.next(probes)).isPresent()) {
                // A Ctrl-C that came while the last step's server was stopping cut that stop short; it must not
                // launch another server only to interrupt it.
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted between steps");
                }
                Point point = next.get();
                listener.stepStarting(
                        backend.name(), point.target(), point.concurrency(), point.target() + experiment.contextPad());
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
                s = StepRoofline.judged(
                        bp.prediction() == null ? null : bp.prediction().prefillFloor(),
                        s,
                        experiment.timeouts().request());
                record(s, servers);
                probes.add(probe(s, bp.profile()));
            }
            surface = surface(bp, probes, servers);
        } catch (StepRunner.StepInterrupted e) {
            record(e.scenario(), servers);
            servers.close();
            recordAnswer(bp, probes, servers, Frontier.INTERRUPTED, List.of());
            throw new Interrupted();
        } catch (InterruptedException e) {
            servers.close();
            recordAnswer(bp, probes, servers, Frontier.INTERRUPTED, List.of());
            throw new Interrupted();
        } finally {
            servers.close();
        }
        recordSkipped(bp, probes, servers);
        ResultDocument doc = recordAnswer(bp, probes, servers, null, surface);
        listener.backendFinished(backend.name(), doc.frontier().get(backend.name()), doc);
    }

    /**
     * A cell whose twin (docs/search.md#matrix) has been answered starts at the twin's measured frontier: one step
     * at it and one above prove it, where the prediction may have been off by an engine rule it does not model.
     */
    private Plan.BackendPlan fromTwin(Plan.BackendPlan bp) {
        if (bp.twin() == null) {
            return bp;
        }
        Frontier twin = recorder.document().frontier().get(bp.twin());
        if (twin == null || twin.maxOkTarget() == null || twin.stoppedBecause() != null) {
            return bp;
        }
        listener.startsFromTwin(bp.backend().name(), bp.twin(), twin.maxOkTarget());
        return bp.startingAt(twin.maxOkTarget());
    }

    /**
     * A search of an endpoint already running, whose engine is asked first (docs/engines.md, openai), sends no prompt
     * longer than the endpoint states it serves: its first step is at that limit, not above it; a resumed search
     * is asked again. An endpoint that states nothing and a search whose max is already within the limit are left as
     * they are.
     */
    private Plan.BackendPlan withinStated(Plan.BackendPlan bp) {
        Backend backend = bp.backend();
        if (!bp.profile().statedBeforeSearch()
                || backend.launcher() == null
                || !ExternalLauncher.KIND.equals(backend.launcher().kind())
                || backend.port() == null) {
            return bp;
        }
        ServedCapacity stated = steps.statedBeforeSearch(backend, bp.profile());
        if (stated.maxPromptTokens() == null) {
            return bp;
        }
        Plan.BackendPlan narrowed = bp.within(stated.maxPromptTokens());
        if (narrowed.strategy().largestTarget() < bp.strategy().largestTarget()) {
            listener.searchesWithinStated(backend.name(), stated, stated.maxPromptTokens());
        }
        return narrowed;
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

    /**
     * The capacity map (docs/search.md#the-capacity-map): for each concurrency above 1, a frontier search between
     * {@code align} and the single-prompt frontier, begun at the level's prediction, on one server kept at that
     * frontier's length: a server launched for a length serves every shorter target at every concurrency, so the
     * whole map costs at most one launch more than the single-prompt frontier (more only when a kept server dies).
     * Steps recorded by an earlier run of the folder count as the level's probes ({@code --resume}).
     */
    private List<Frontier.Surface> surface(Plan.BackendPlan bp, List<Probe> single, ServerPolicy servers)
            throws InterruptedException {
        Experiment.Sweep sweep = experiment.sweep();
        if (!sweep.mapped() || !(bp.strategy() instanceof FrontierStrategy)) {
            return List.of();
        }
        Point.Series single1 = bp.strategy().series();
        Scenario.Server statement = statement(recorder.document().series(single1));
        SurfacePrediction.Holds holds = SurfacePrediction.Holds.of(statement == null ? null : statement.capacity());
        Experiment.Frontier f = sweep.frontier();
        // auto: as many as the first servers stated they hold at once (docs/search.md#the-capacity-map).
        List<Integer> levels = sweep.autoConcurrency()
                ? SurfacePrediction.autoLevels(
                        holds, f.align(), experiment.load().outputLen(), Experiment.Sweep.MAX_CONCURRENT)
                : sweep.concurrent();
        if (levels.isEmpty()) {
            return List.of();
        }
        Frontier answer = bp.answer(single);
        Long frontier = answer.maxOkTarget();
        List<Frontier.Surface> surface = new ArrayList<>();
        if (frontier == null) {
            for (int n : levels) {
                surface.add(new Frontier.Surface(
                        n, null, null, null, "no single prompt was served", null, 0, Frontier.NOTHING_FITS));
            }
            return surface;
        }
        Set<String> seenServers = new HashSet<>(serverIds(recorder.document().series(single1)));
        servers.keepFrom(frontier);
        for (int n : levels) {
            Point.Series series = new Point.Series(single1.backend(), single1.params(), n);
            FrontierSettings settings = new FrontierSettings(
                    Math.min(f.align(), frontier),
                    frontier,
                    f.precision(),
                    Math.min(f.align(), frontier),
                    f.maxLaunches(),
                    experiment.contextPad(),
                    bp.profile().promptAllowance());
            BackendPrediction.Level predicted =
                    SurfacePrediction.level(n, frontier, experiment.load().outputLen(), 1, holds);
            String beyond = SurfacePrediction.beyondCap(n, holds);
            if (beyond != null && recorder.document().series(series).isEmpty()) {
                // The server's own count is the answer: its slots (or its running cap) never run N together, so
                // nothing is sent (docs/search.md#the-capacity-map).
                surface.add(new Frontier.Surface(
                        n,
                        null,
                        null,
                        FailureClass.NOT_CONCURRENT.id(),
                        beyond + ": not sent",
                        null,
                        0,
                        Frontier.NOTHING_FITS));
                continue;
            }
            long start = predicted.target() == null ? 1 : predicted.target();
            FrontierStrategy search = new FrontierStrategy(series, settings, start, List.of(), false);
            List<Probe> probes = new ArrayList<>();
            for (Scenario s : recorder.document().series(series)) {
                if (s.outcome().launched()) {
                    probes.add(levelProbe(s));
                }
            }
            Optional<Point> next;
            while ((next = search.next(probes)).isPresent()) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted between steps");
                }
                Point point = next.get();
                listener.stepStarting(
                        bp.backend().name(),
                        point.target(),
                        point.concurrency(),
                        point.target() + experiment.contextPad());
                Scenario s;
                try {
                    s = servers.step(point);
                } catch (RuntimeException | Error e) {
                    servers.close();
                    s = StepRecords.clientError(
                            point, steps.command(bp.backend(), point.target()), null, null, Phase.PREFLIGHT, e);
                }
                record(s, servers);
                probes.add(levelProbe(s));
            }
            surface.add(level(
                    n,
                    predicted.target(),
                    search.answer(probes),
                    recorder.document().series(series),
                    seenServers));
        }
        return surface;
    }

    /** A level's probe: the engine's hints speak of one request's length, not of N held together. */
    private static Probe levelProbe(Scenario s) {
        return new Probe(s.targetLen(), s.outcome(), null, null);
    }

    /** The level's entry of the map, with the servers it launched that no earlier level had. */
    private static Frontier.Surface level(
            int n, Long start, Frontier answer, List<Scenario> steps, Set<String> seenServers) {
        int launched = 0;
        for (String id : serverIds(steps)) {
            if (seenServers.add(id)) {
                launched++;
            }
        }
        String cause = null;
        String detail = null;
        for (Scenario s : steps) {
            if (answer.minFailedTarget() != null
                    && s.targetLen() == answer.minFailedTarget()
                    && s.outcome().failed()) {
                cause = s.outcome().id();
                detail = s.failure() != null ? s.failure().detail() : s.error();
            }
        }
        return new Frontier.Surface(
                n,
                answer.maxOkTarget(),
                answer.minFailedTarget(),
                cause,
                detail,
                start,
                launched,
                answer.stoppedBecause());
    }

    /** The latest statement a single-prompt server made about its limits: the capacity arithmetic's inputs. */
    private static Scenario.Server statement(List<Scenario> steps) {
        Scenario.Server latest = null;
        for (Scenario s : steps) {
            if (s.server() != null && s.server().capacity() != null) {
                latest = s.server();
            }
        }
        return latest;
    }

    private static List<String> serverIds(List<Scenario> steps) {
        List<String> ids = new ArrayList<>();
        for (Scenario s : steps) {
            String id = serverId(s);
            if (id != null && !ids.contains(id)) {
                ids.add(id);
            }
        }
        return ids;
    }

    private ResultDocument recordAnswer(
            Plan.BackendPlan bp,
            List<Probe> probes,
            ServerPolicy servers,
            String stopped,
            List<Frontier.Surface> surface) {
        String name = bp.backend().name();
        return recorder.update(d -> {
            Frontier f = bp.answer(probes)
                    .withLaunches(launches(d.series(bp.strategy().series())) + servers.unrecordedLaunches())
                    .producedBy(
                            experiment.sweep().strategy().id(),
                            experiment.sweep().restart().name().toLowerCase(Locale.ROOT));
            f = f.withCorrect(Frontier.Correct.ofSteps(d.series(bp.strategy().series())))
                    .withSurface(surface);
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
            return new Probe(s.targetLen(), s.outcome(), null, null, false, correct(s));
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
        return new Probe(s.targetLen(), s.outcome(), hint, kind, hang, correct(s));
    }

    // Only a step whose keys were checked tells the search of right answers anything.
    private static Boolean correct(Scenario s) {
        if (s.answer() == null || !(s.answer().correct() || s.answer().wrong())) {
            return null;
        }
        return s.answer().correct();
    }
}
