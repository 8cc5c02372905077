package dev.ctxprobe.explore;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.EngineProfiles;
import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.results.FrontierEntry;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Runs an experiment's backends one after the other: the strategy picks a target, the step runner runs it, the
 * result goes back to the strategy, until the strategy is done (spec 00, the way data flows).
 */
public final class Exploration {
    /** Startup failures at max that say the length is too much, so a shorter server may still start. */
    private static final Set<String> REFUSED_FOR_LENGTH =
            Set.of(FailureClass.KV_INSUFFICIENT.id(), FailureClass.OOM_STARTUP.id(), FailureClass.CONFIG_REJECTED.id());

    /** Outcomes after which a kept server ({@code restart: on_failure}) is replaced before the next probe. */
    private static final Set<String> REPLACE_AFTER =
            Set.of(FailureClass.TIMEOUT.id(), FailureClass.HTTP_ERROR.id(), FailureClass.SERVER_CRASH.id());

    private final Experiment experiment;
    private final Experiment.Strategy strategy;
    private final StepRunner steps;
    private final RunListener listener;

    /**
     * @param strategy the file's strategy, or the command line's override
     * @param runDir where step logs go
     */
    public Exploration(
            Experiment experiment,
            Experiment.Strategy strategy,
            Launcher launcher,
            HardwareProbe hardware,
            Path runDir,
            RunListener listener) {
        this.experiment = experiment;
        this.strategy = strategy;
        this.steps = new StepRunner(
                experiment,
                launcher,
                runDir,
                new GpuHygiene(hardware, experiment.timeouts().shutdown()));
        this.listener = listener;
    }

    /** Thrown when the user stops the run; carries the document with the interrupted step. */
    public static final class Interrupted extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient ResultDocument document;

        Interrupted(ResultDocument document) {
            super("interrupted");
            this.document = document;
        }

        public ResultDocument document() {
            return document;
        }
    }

    /**
     * Explores {@code backends}, continuing {@code start} (empty for a new run, the earlier document for
     * {@code --resume}: finished steps are kept, an interrupted step runs again).
     */
    public ResultDocument run(ResultDocument start, List<Backend> backends) throws Interrupted, ResumeMismatch {
        ResultDocument doc = withoutInterrupted(start);
        for (Backend b : backends) {
            doc = explore(b, doc);
        }
        return doc;
    }

    private static ResultDocument withoutInterrupted(ResultDocument d) {
        List<Scenario> kept = d.scenarios().stream()
                .filter(s -> !FailureClass.INTERRUPTED.id().equals(s.outcome()))
                .toList();
        return new ResultDocument(d.metadata(), d.config(), kept, d.frontier());
    }

    private ResultDocument explore(Backend backend, ResultDocument start) throws Interrupted, ResumeMismatch {
        EngineProfile profile = EngineProfiles.get(backend.engine());
        Strategy search = strategyFor(profile);
        Strategy chooser = strategy == Experiment.Strategy.FRONTIER ? withCurve(search) : search;
        boolean reuse = experiment.sweep().restart() == Restart.ON_FAILURE;
        ResultDocument doc = start;
        List<Probe> probes = earlierProbes(backend, profile, search, doc);
        Servers servers = new Servers(backend, profile, reuse);
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
                    s = servers.step(target);
                } catch (RuntimeException e) {
                    servers.close();
                    ServerCommand cmd = ServerCommand.resolve(
                            experiment, backend, target, backend.port() == null ? 0 : backend.port());
                    s = steps.clientError(backend, cmd, target, null, null, Phase.PREFLIGHT, e);
                }
                doc = doc.withScenario(s);
                probes.add(probe(s, profile));
                listener.stepFinished(s, doc);
            }
        } catch (StepRunner.StepInterrupted e) {
            doc = doc.withScenario(e.scenario());
            listener.stepFinished(e.scenario(), doc);
            throw new Interrupted(withFrontier(doc, backend, profile, search, probes, servers, "interrupted"));
        } catch (InterruptedException e) {
            throw new Interrupted(withFrontier(doc, backend, profile, search, probes, servers, "interrupted"));
        } finally {
            servers.close();
        }
        if (search instanceof ListStrategy list) {
            Set<Long> recorded = doc.scenariosOf(backend.name()).stream()
                    .map(Scenario::targetLen)
                    .collect(Collectors.toSet());
            for (long skipped : list.skipped(probes)) {
                if (recorded.contains(skipped)) {
                    continue;
                }
                Scenario s = skipped(backend, skipped);
                doc = doc.withScenario(s);
                listener.stepFinished(s, doc);
            }
        }
        doc = withFrontier(doc, backend, profile, search, probes, servers, null);
        listener.backendFinished(backend.name(), doc.frontier().get(backend.name()), doc);
        return doc;
    }

    /** Thrown when a resumed folder's steps do not fit its experiment (a hand-edited file). */
    public static final class ResumeMismatch extends Exception {
        private static final long serialVersionUID = 1L;

        ResumeMismatch(String message) {
            super(message);
        }
    }

    // The probes of finished steps (on --resume), checked against the strategy before anything is launched.
    private List<Probe> earlierProbes(Backend backend, EngineProfile profile, Strategy search, ResultDocument doc)
            throws ResumeMismatch {
        List<Probe> probes = new ArrayList<>();
        for (Scenario s : doc.scenariosOf(backend.name())) {
            if ("skipped".equals(s.outcome())) {
                continue;
            }
            try {
                probes.add(probe(s, profile));
            } catch (IllegalArgumentException e) {
                throw new ResumeMismatch("step " + s.targetLen() + " of " + backend.name() + ": " + e.getMessage());
            }
        }
        if (search instanceof ListStrategy) {
            List<Long> targets = experiment.sweep().targets();
            List<Long> done = probes.stream().map(Probe::target).toList();
            if (done.size() > targets.size() || !targets.subList(0, done.size()).equals(done)) {
                throw new ResumeMismatch(backend.name() + " has steps " + done + " where the list is " + targets);
            }
        }
        return probes;
    }

    private ResultDocument withFrontier(
            ResultDocument doc,
            Backend backend,
            EngineProfile profile,
            Strategy search,
            List<Probe> probes,
            Servers servers,
            String stoppedBecause) {
        Frontier f = (search instanceof FrontierStrategy frontier
                        ? frontier.summary(probes)
                        : Frontier.of(probes, experiment.contextPad(), promptAllowance(profile)))
                .withLaunches(launches(doc, backend) + servers.discardedLaunches);
        if (stoppedBecause != null) {
            f = f.withStoppedBecause(stoppedBecause);
        }
        FrontierEntry entry = new FrontierEntry(
                f.maxOkTarget(),
                f.minFailedTarget(),
                f.bracketRatio(),
                f.launches(),
                f.predictedMax(),
                f.nonMonotonic(),
                experiment.sweep().restart().name().toLowerCase(Locale.ROOT),
                strategy.name().toLowerCase(Locale.ROOT),
                f.stoppedBecause());
        return doc.withFrontier(backend.name(), entry);
    }

    // Servers that really started: each has its own pid, shared by the steps a kept server answered.
    private static int launches(ResultDocument doc, Backend backend) {
        return (int) doc.scenariosOf(backend.name()).stream()
                .filter(s -> s.server() != null && s.server().pid() != null)
                .map(s -> s.server().pid())
                .distinct()
                .count();
    }

    private Strategy strategyFor(EngineProfile profile) {
        Experiment.Sweep sweep = experiment.sweep();
        if (strategy == Experiment.Strategy.LIST) {
            return new ListStrategy(sweep.targets(), sweep.stopAfterFailure());
        }
        Experiment.Frontier f = sweep.frontier();
        return new FrontierStrategy(new FrontierSettings(
                f.min(),
                f.max(),
                f.precision(),
                f.align(),
                f.maxLaunches(),
                experiment.contextPad(),
                promptAllowance(profile)));
    }

    // The curve's lengths go first; the search is stateless, so it simply counts them among its probes.
    private Strategy withCurve(Strategy search) {
        List<Long> curve = experiment.sweep().curve();
        if (curve.isEmpty()) {
            return search;
        }
        return probes -> {
            for (long target : curve) {
                if (probes.stream().noneMatch(p -> p.target() == target)) {
                    return OptionalLong.of(target);
                }
            }
            return search.next(probes);
        };
    }

    // How far below a prompt-length hint the largest accepted prompt lies, by the engine's own rule.
    private static long promptAllowance(EngineProfile profile) {
        long reference = 1L << 20;
        return reference - profile.largestPrompt(reference);
    }

    static Probe probe(Scenario s, EngineProfile profile) {
        FailureClass failure = s.success() ? null : FailureClass.fromId(s.outcome());
        Long hint = null;
        if (s.server() != null) {
            hint = s.server().maxContextHint() != null
                    ? s.server().maxContextHint()
                    : s.server().kvCapacityTokens();
        }
        return new Probe(s.targetLen(), failure, hint, hint == null ? null : profile.hintKind());
    }

    private Scenario skipped(Backend backend, long target) {
        ServerCommand cmd =
                ServerCommand.resolve(experiment, backend, target, backend.port() == null ? 0 : backend.port());
        return new Scenario(
                backend.name(),
                target,
                cmd.maxModelLen(),
                false,
                cmd.serverArgs(),
                null,
                "skipped: an earlier step of this backend failed and sweep.stop_after_failure is true",
                "skipped",
                null,
                null,
                null,
                null,
                List.of());
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
        private boolean maxRefused;
        /** Launches whose refusal at max was not recorded as a step: counted, since they cost their startup. */
        int discardedLaunches;

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
                    throw new StepRunner.StepInterrupted(e.scenario().withTarget(target), e);
                }
                if (l.failed() != null && launchAt != target) {
                    if (!REFUSED_FOR_LENGTH.contains(l.failed().outcome())) {
                        // A timeout, a busy port, a crash: the same would happen at this target; it is its answer.
                        return l.failed().withTarget(target);
                    }
                    // A server at max would not start for its length: this and later targets get servers of their
                    // own length. The refusal at max is recorded when max itself is probed.
                    maxRefused = true;
                    if (l.failed().server() != null && l.failed().server().pid() != null) {
                        discardedLaunches++;
                    }
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
            if (!current.handle().isAlive() || REPLACE_AFTER.contains(s.outcome())) {
                // A server that hung or broke a stream may still be busy with the abandoned prompt: the next
                // probe would time out too, or measure a TTFT inflated by it.
                s = steps.stop(s, current.handle());
                live = null;
            }
            return s;
        }

        private long largestTarget() {
            Experiment.Sweep sweep = experiment.sweep();
            if (strategy == Experiment.Strategy.FRONTIER) {
                return sweep.frontier().max();
            }
            return sweep.targets().stream().mapToLong(Long::longValue).max().orElseThrow();
        }

        void close() {
            if (live != null) {
                live.handle().stop();
                live = null;
            }
        }
    }
}
