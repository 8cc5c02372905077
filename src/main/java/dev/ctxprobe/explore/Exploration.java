package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * Runs a plan's backends, one after the other or up to {@code parallel} at once: per backend, the strategy picks a
 * target, the step runner runs it, the result is recorded and goes back to the strategy, until the strategy is done.
 * Backends that run at once share nothing but the recorder, which keeps the document whole.
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
     * @param runDir where step logs go
     * @param recorder holds the document to continue (a new run's, or an earlier one for {@code --resume}: finished
     *     steps are kept, an interrupted step runs again) and saves every step
     * @param parallel how many backends may be explored at once; backends with the same fixed port, or that their
     *     launcher says cannot run together (the same accelerators), still take turns
     */
    public Exploration(
            Plan plan,
            Function<Backend, Launcher> launchers,
            Path runDir,
            Recorder recorder,
            RunListener listener,
            int parallel) {
        if (parallel < 1) {
            throw new IllegalArgumentException("parallel is 1 or more, not " + parallel);
        }
        this.plan = plan;
        this.experiment = plan.experiment();
        this.launchers = launchers;
        this.steps = new StepRunner(experiment, launchers, runDir, listener);
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
            earlier.put(b, earlierProbes(b, plan.strategy(b)));
        }
        if (parallel == 1 || earlier.size() == 1) {
            for (Map.Entry<Plan.BackendPlan, List<Probe>> b : earlier.entrySet()) {
                explore(b.getKey(), b.getValue());
            }
        } else {
            together(earlier);
        }
        return recorder.document();
    }

    /**
     * Explores up to {@code parallel} backends at once, each on a thread of its own. A Ctrl-C interrupts the calling
     * thread, which passes it on to every backend (a second one too, to turn their stops into KILLs); each records
     * its interrupted step and stops its server before this returns.
     */
    private void together(Map<Plan.BackendPlan, List<Probe>> earlier) throws Interrupted {
        Turns turns = new Turns(List.copyOf(earlier.keySet()));
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicReference<Throwable> broken = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < Math.min(parallel, earlier.size()); i++) {
            workers.add(Thread.ofPlatform().name("ctxprobe-backend-" + (i + 1)).unstarted(() -> {
                Plan.BackendPlan b;
                while ((b = turns.next()) != null) {
                    try {
                        explore(b, earlier.get(b));
                    } catch (Interrupted e) {
                        interrupted.set(true);
                        turns.stop();
                    } catch (RuntimeException | Error e) {
                        // A bug of ctxprobe's: the other backends stop as for a Ctrl-C and the error surfaces.
                        broken.compareAndSet(null, e);
                        turns.stop();
                        workers.forEach(Thread::interrupt);
                    } finally {
                        turns.done(b);
                    }
                }
            }));
        }
        workers.forEach(Thread::start);
        for (Thread w : workers) {
            while (true) {
                try {
                    w.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted.set(true);
                    turns.stop();
                    workers.forEach(Thread::interrupt);
                }
            }
        }
        if (broken.get() instanceof RuntimeException e) {
            throw e;
        }
        if (broken.get() instanceof Error e) {
            throw e;
        }
        if (interrupted.get()) {
            throw new Interrupted();
        }
    }

    /**
     * Which backend goes next: the first waiting one that may run beside those running now. Two backends take turns
     * when they have the same fixed port, or when their launcher says their servers cannot run together.
     */
    private final class Turns {
        private final List<Plan.BackendPlan> waiting;
        private final List<Plan.BackendPlan> running = new ArrayList<>();
        private boolean stopped;

        Turns(List<Plan.BackendPlan> backends) {
            this.waiting = new ArrayList<>(backends);
        }

        /** The next backend to explore, waiting while every one left clashes; null when none is left or on stop. */
        synchronized Plan.BackendPlan next() {
            while (!stopped && !waiting.isEmpty()) {
                for (Plan.BackendPlan b : waiting) {
                    if (running.stream().noneMatch(r -> clash(r, b))) {
                        waiting.remove(b);
                        running.add(b);
                        return b;
                    }
                }
                try {
                    wait();
                } catch (InterruptedException e) {
                    stopped = true;
                }
            }
            return null;
        }

        synchronized void done(Plan.BackendPlan b) {
            running.remove(b);
            notifyAll();
        }

        synchronized void stop() {
            stopped = true;
            notifyAll();
        }

        private boolean clash(Plan.BackendPlan a, Plan.BackendPlan b) {
            Backend x = a.backend();
            Backend y = b.backend();
            if (x.port() != null && x.port().equals(y.port())) {
                return true;
            }
            if (!a.profile().launchesServer() || !b.profile().launchesServer()) {
                return false;
            }
            Launcher lx = launchers.apply(x);
            return lx == launchers.apply(y) && !lx.canRunTogether(x.env(), y.env());
        }
    }

    private void explore(Plan.BackendPlan bp, List<Probe> earlier) throws Interrupted {
        Backend backend = bp.backend();
        Strategy chooser = plan.strategy(bp);
        List<Probe> probes = new ArrayList<>(earlier);
        boolean reuse = experiment.sweep().restart() == Restart.ON_FAILURE
                && bp.profile().launchesServer();
        Servers servers = new Servers(backend, bp.profile(), reuse);
        try {
            OptionalLong next;
            while ((next = chooser.next(probes)).isPresent()) {
                // A Ctrl-C that came while the last step's server was stopping cut that stop short; it must not
                // launch another server only to interrupt it.
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted between steps");
                }
                long target = next.getAsLong();
                listener.stepStarting(backend.name(), target, target + experiment.contextPad());
                Scenario s;
                try {
                    s = selfSizes(bp, probes, target)
                            ? steps.runSelfSized(backend, bp.profile(), target, selfSizedTarget(bp, target))
                            : servers.step(target);
                } catch (RuntimeException | Error e) {
                    servers.close();
                    s = steps.clientError(
                            backend, steps.command(backend, target), target, null, null, Phase.PREFLIGHT, e);
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
        if (chooser instanceof ListStrategy list) {
            Set<Long> recorded = new java.util.HashSet<>();
            recorder.document().scenariosOf(backend.name()).forEach(s -> recorded.add(s.targetLen()));
            List<Long> skipped = list.skipped(probes);
            if (!skipped.isEmpty()) {
                List<Scenario> done = recorder.document().scenariosOf(backend.name());
                Scenario because = done.stream()
                        .filter(s -> s.outcome().failed())
                        .findFirst()
                        .orElseThrow();
                for (long target : skipped) {
                    if (!recorded.contains(target)) {
                        record(steps.skipped(backend, target, because), servers);
                    }
                }
            }
        }
        ResultDocument doc = recordAnswer(bp, probes, servers, null);
        listener.backendFinished(backend.name(), doc.frontier().get(backend.name()), doc);
    }

    /**
     * True for the search's first probe of a backend with {@code auto_first}, whose engine can fit its context to
     * memory itself: that launch lets the engine size itself and states the limit in one launch.
     */
    private boolean selfSizes(Plan.BackendPlan bp, List<Probe> probes, long target) {
        if (!Plan.selfSizes(experiment, bp.backend(), bp.profile())) {
            return false;
        }
        List<Long> curve = experiment.sweep().curve();
        return target == plan.frontierSettings(bp).highestTarget()
                && probes.stream().allMatch(p -> curve.contains(p.target()));
    }

    /**
     * The target a self-sized server is measured at, from the max_model_len it fitted: the largest aligned target
     * whose launch would ask for no more, within the search's bounds.
     */
    private java.util.function.LongUnaryOperator selfSizedTarget(Plan.BackendPlan bp, long highest) {
        FrontierSettings settings = plan.frontierSettings(bp);
        return fitted -> Math.max(
                settings.lowestTarget(), Math.min(highest, settings.alignDown(fitted - experiment.contextPad())));
    }

    private void record(Scenario s, Servers servers) {
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
    private List<Probe> earlierProbes(Plan.BackendPlan bp, Strategy chooser) throws ResumeMismatch {
        List<Probe> probes = new ArrayList<>();
        for (Scenario s : recorder.document().scenariosOf(bp.backend().name())) {
            if (s.outcome().launched()) {
                probes.add(probe(s, bp.profile()));
            }
        }
        if (chooser instanceof ListStrategy) {
            List<Long> targets = experiment.sweep().targets();
            List<Long> done = probes.stream().map(Probe::target).toList();
            if (done.size() > targets.size() || !targets.subList(0, done.size()).equals(done)) {
                throw new ResumeMismatch(bp.backend().name() + " has steps " + done + " where the list is " + targets);
            }
        }
        return probes;
    }

    private ResultDocument recordAnswer(Plan.BackendPlan bp, List<Probe> probes, Servers servers, String stopped) {
        String name = bp.backend().name();
        return recorder.update(d -> {
            Frontier f = plan.answer(bp, probes)
                    .withLaunches(launches(d.scenariosOf(name)) + servers.unrecordedLaunches())
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

    /**
     * The servers of one backend: a new one per step, or with {@code restart: on_failure} one kept alive across
     * steps while it serves and its context holds the target.
     */
    private final class Servers {
        private final Backend backend;
        private final EngineProfile profile;
        private final boolean reuse;
        private StepRunner.Live live;
        /** Where the kept server's latest step sits in the document: its stop is recorded there. */
        private int liveStepIndex = -1;
        /** A server at the largest target refused to start: later servers are launched at their own target. */
        private boolean maxRefused;
        /** That refusal, until it is recorded as the answer for the largest target. */
        private Scenario refusalAtMax;

        Servers(Backend backend, EngineProfile profile, boolean reuse) {
            this.backend = backend;
            this.profile = profile;
            this.reuse = reuse;
        }

        Scenario step(long target) throws InterruptedException {
            if (!profile.launchesServer()) {
                StepRunner.Launch l = steps.launch(backend, profile, target);
                return steps.measure(backend, profile, l.live(), target);
            }
            if (!reuse) {
                return steps.run(backend, profile, target);
            }
            if (refusalAtMax != null && target == refusalAtMax.targetLen()) {
                // That server was launched and refused already: the same command would only refuse again.
                return refusalAtMax;
            }
            if (live != null
                    && (!live.handle().isAlive() || live.command().maxModelLen() < target + experiment.contextPad())) {
                close();
            }
            if (live == null) {
                long launchAt = maxRefused ? target : Math.max(target, largestTarget());
                StepRunner.Launch l;
                try {
                    l = steps.launch(backend, profile, launchAt);
                } catch (StepRunner.StepInterrupted e) {
                    // The step interrupted is the probed target's, whatever length its server was launching at.
                    throw new StepRunner.StepInterrupted(
                            e.scenario().toBuilder().target(target).build(), e);
                }
                if (l.failed() != null && launchAt != target) {
                    if (!l.failed().outcome().worthRetryBelow()) {
                        // A timeout, a busy port, a crash: the same would happen at this target; it is its answer.
                        return l.failed().toBuilder().target(target).build();
                    }
                    // A server at max would not start for its length: this and later targets get servers of their
                    // own length, and the refusal is the answer for max when the search asks for it.
                    maxRefused = true;
                    refusalAtMax = l.failed();
                    l = steps.launch(backend, profile, target);
                }
                if (l.failed() != null) {
                    return l.failed();
                }
                live = l.live();
            }
            StepRunner.Live current = live;
            Scenario s;
            try {
                s = steps.measure(backend, profile, current, target);
            } catch (InterruptedException e) {
                live = null;
                throw new StepRunner.StepInterrupted(steps.interrupted(backend, current, target, Phase.MEASURE), e);
            }
            if (!current.handle().isAlive() || s.outcome().replacesKeptServer()) {
                // A server that hung or broke a stream may still be busy with the abandoned prompt.
                s = steps.stop(s, current);
                live = null;
            }
            return s;
        }

        /** A step went into the document at {@code index}. */
        void recorded(Scenario s, int index) {
            if (live != null
                    && s.server() != null
                    && live.facts().id().equals(s.server().id())) {
                liveStepIndex = index;
            }
            if (s == refusalAtMax) {
                refusalAtMax = null;
            }
        }

        /** A refused launch at max that no step recorded still cost a launch. */
        int unrecordedLaunches() {
            return refusalAtMax != null
                            && refusalAtMax.server() != null
                            && refusalAtMax.server().id() != null
                    ? 1
                    : 0;
        }

        private long largestTarget() {
            Experiment.Sweep sweep = experiment.sweep();
            if (sweep.strategy() == Experiment.Strategy.FRONTIER) {
                return sweep.frontier().max()
                        / sweep.frontier().align()
                        * sweep.frontier().align();
            }
            return sweep.targets().stream().mapToLong(Long::longValue).max().orElseThrow();
        }

        /** Stops a kept server and records what its stop showed on the last step it answered. */
        void close() {
            if (live == null) {
                return;
            }
            StepRunner.Live closing = live;
            live = null;
            listener.stepPhase(
                    backend.name(),
                    closing.command().targetLen(),
                    StepPhase.STOPPING,
                    closing.handle().log());
            StopReport report = closing.handle().stop();
            if (liveStepIndex >= 0) {
                int index = liveStepIndex;
                liveStepIndex = -1;
                recorder.update(d ->
                        d.withScenarioAt(index, StepRunner.stopped(d.scenarios().get(index), report)));
            }
        }
    }
}
