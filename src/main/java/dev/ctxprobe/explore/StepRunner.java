package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.ReadLimits;
import dev.ctxprobe.client.RequestObserver;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.Capacity;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Limit;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.launch.Endpoint;
import dev.ctxprobe.launch.LaunchException;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.Ports;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Refusal;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.ServerLog;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.EngineCount;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongUnaryOperator;

/**
 * The lifecycle of one step: preflight, launch, readiness, warm-up, measure, stop, verify gone; or, for a server
 * kept alive across steps, only the requests. What each phase observed goes to {@link Judge}; every outcome,
 * ctxprobe's own faults included, becomes a {@link Scenario} through {@link StepRecords}.
 *
 * @param launchers the launcher of each backend
 * @param logs where each step's server log goes
 * @param client how a ready server is asked what it states and sent the step's requests
 * @param passkey the pass-key check of the backends that have one, with each backend's control
 */
record StepRunner(
        Experiment experiment,
        Function<Backend, Launcher> launchers,
        StepLogs logs,
        RunListener listener,
        ServerClient client,
        PasskeyCheck passkey) {
    // A failed request may mean the server is dying: give it this long to exit before judging.
    private static final Duration CRASH_GRACE = Duration.ofSeconds(2);
    // Each question to a ready server about its limits; one that does not answer in time states nothing.
    private static final Duration STATED_TIMEOUT = Duration.ofSeconds(5);
    // How long the served model's name is asked for at least.
    private static final Duration MODEL_WAIT = Duration.ofSeconds(10);

    /**
     * A server that is up, with what its startup taught.
     *
     * @param logRelative its log in the run folder, null for a server whose log ctxprobe does not hold
     * @param stated what the ready server stated about its limits
     */
    record Live(
            ServerHandle handle,
            ServerCommand command,
            String logRelative,
            Scenario.Server facts,
            ServedCapacity stated) {}

    /** How a launch ended: a live server, or a failed step. */
    record Launch(Live live, Scenario failed) {}

    /** A step with a server of its own: launch at {@code point}'s target + pad, measure, stop. */
    Scenario run(Backend backend, EngineProfile profile, Point point) throws StepInterrupted {
        Launch launch = launch(backend, profile, point, null);
        if (launch.failed() != null) {
            return launch.failed();
        }
        return measureThenStop(backend, profile, launch.live(), point);
    }

    /**
     * The search's first step where the engine sizes itself: a server launched with {@code {max_model_len}} =
     * {@code auto}, measured at the target that the length it fitted allows ({@code targetFor} of the stated
     * max_model_len; {@code highest}'s target when it stated none). The step's max_model_len is the fitted one.
     */
    Scenario runSelfSized(Backend backend, EngineProfile profile, Point highest, LongUnaryOperator targetFor)
            throws StepInterrupted {
        Launch launch = launch(backend, profile, highest, profile.autoLength());
        if (launch.failed() != null) {
            return launch.failed();
        }
        Live started = launch.live();
        long target = started.command().selfSized()
                ? highest.target()
                : targetFor.applyAsLong(started.command().maxModelLen());
        Live live = new Live(
                started.handle(),
                started.command().withTarget(target),
                started.logRelative(),
                started.facts(),
                started.stated());
        return measureThenStop(backend, profile, live, highest.at(target));
    }

    /** Measures a live server at {@code point}, then stops it, whatever the measurement did. */
    private Scenario measureThenStop(Backend backend, EngineProfile profile, Live live, Point point)
            throws StepInterrupted {
        Scenario measured;
        try {
            measured = measure(backend, profile, live, point);
        } catch (InterruptedException e) {
            throw new StepInterrupted(interrupted(live, point, Phase.MEASURE), e);
        } catch (RuntimeException | Error e) {
            // A fault of ctxprobe's own, an OutOfMemoryError too, must still stop the server it started and leave a
            // classified step.
            return stop(
                    StepRecords.clientError(point, live.command(), live.logRelative(), live.facts(), Phase.MEASURE, e),
                    live);
        }
        return stop(measured, live);
    }

    /**
     * What an endpoint already running states about its limits before any step is sent, asked as a ready server is
     * after its launch; {@link ServedCapacity#NONE} when it does not answer or states nothing.
     */
    ServedCapacity statedBeforeSearch(Backend backend, EngineProfile profile) {
        Endpoint endpoint = new Endpoint(Ports.connectHost(backend.host()), backend.port());
        return profile.statedCapacity(List.of(), client.queries(endpoint.baseUrl(), STATED_TIMEOUT, apiKey(backend)));
    }

    /** The step's command with the backend's port, or, where it names none, 0: for steps that launch nothing. */
    ServerCommand command(Backend backend, long target) {
        return ServerCommand.resolve(experiment, backend, target, backend.port() == null ? 0 : backend.port());
    }

    /**
     * Starts a server for {@code point} and waits until it is ready; with {@code autoLength} (the profile's word for
     * an automatic length), one that fits its context to memory itself.
     */
    Launch launch(Backend backend, EngineProfile profile, Point point, String autoLength) throws StepInterrupted {
        Launcher launcher = launchers.apply(backend);
        int port = backend.port() != null ? backend.port() : launcher.freePort();
        ServerCommand cmd = ServerCommand.resolve(experiment, backend, point.target(), port, autoLength);
        String logRelative = logs.fresh(point);
        LaunchSpec spec = new LaunchSpec(
                backend.name() + "_ctx_" + point.target(),
                cmd.argv(),
                backend.env(),
                logs.dir().resolve(logRelative),
                backend.host(),
                cmd.port(),
                backend.healthPath() != null ? backend.healthPath() : profile.readinessPath(),
                profile.readyLines(),
                backend.startup(),
                experiment.timeouts().shutdown(),
                experiment.timeouts().queue());
        Optional<Refusal> refused;
        listener.stepPhase(backend.name(), point.target(), StepPhase.QUEUED, null);
        try {
            refused = launcher.preflight(spec);
        } catch (InterruptedException e) {
            throw new StepInterrupted(
                    StepRecords.interrupted(point, cmd, null, null, Phase.PREFLIGHT)
                            .build(),
                    e);
        }
        if (refused.isPresent()) {
            return new Launch(null, StepRecords.refused(point, cmd, Phase.PREFLIGHT, refused.get()));
        }
        ServerHandle handle;
        listener.stepPhase(backend.name(), point.target(), StepPhase.LAUNCHING, null);
        try {
            handle = launcher.launch(spec);
        } catch (LaunchException e) {
            return new Launch(null, StepRecords.refused(point, cmd, Phase.STARTUP, e.refusal()));
        }
        String held = handle.log() == null ? null : logRelative;
        listener.stepPhase(backend.name(), point.target(), StepPhase.LOADING, handle.log());
        try {
            return awaitReady(backend, profile, point, cmd, handle, held);
        } catch (InterruptedException e) {
            Live live =
                    new Live(handle, cmd, held, StepRecords.server(handle, null, Capacity.NONE), ServedCapacity.NONE);
            throw new StepInterrupted(interrupted(live, point, Phase.READINESS), e);
        } catch (RuntimeException | Error e) {
            // Whatever broke in ctxprobe, the server it started must not outlive the step.
            Scenario.Server started = StepRecords.server(handle, null, Capacity.NONE);
            Live live = new Live(handle, cmd, held, started, ServedCapacity.NONE);
            return new Launch(null, stop(StepRecords.clientError(point, cmd, held, started, Phase.READINESS, e), live));
        }
    }

    private Launch awaitReady(
            Backend backend,
            EngineProfile profile,
            Point point,
            ServerCommand cmd,
            ServerHandle handle,
            String logRelative)
            throws InterruptedException {
        StartupWatch watch = StartupWatch.start(
                handle,
                profile,
                experiment.timeouts().fatalGrace(),
                experiment.timeouts().stall());
        Readiness ready;
        Optional<StartupWatch.Verdict> verdict;
        try {
            ready = handle.awaitReady();
        } finally {
            verdict = watch.close();
        }
        List<String> lines = lines(handle);
        Capacity capacity = profile.readCapacity(lines);
        if (verdict.isPresent()) {
            StepFailure f = Judge.verdict(profile, verdict.get(), lines);
            Scenario.Server server = StepRecords.server(handle, ready, capacity.merge(f.named()));
            if (f.named().limit() != null) {
                server = server.withHint(f.named().maxContextHint(), f.named().hintKind());
            }
            Live live = new Live(handle, cmd, logRelative, server, ServedCapacity.NONE);
            return new Launch(
                    null,
                    stop(StepRecords.failed(point, cmd, logRelative, server, f).build(), live));
        }
        if (ready instanceof Readiness.Ready r) {
            listener.stepPhase(backend.name(), point.target(), StepPhase.READY, handle.log());
            Scenario.Server facts = StepRecords.server(handle, r, capacity);
            ServedCapacity stated = profile.statedCapacity(
                    lines, client.queries(handle.endpoint().baseUrl(), STATED_TIMEOUT, apiKey(backend)));
            ServerCommand served = cmd;
            if (!stated.isEmpty()) {
                facts = facts.withCapacity(stated);
                Optional<Limit> hint = profile.capacityHint(stated, cmd.maxModelLen(), cmd.selfSized());
                if (hint.isPresent()) {
                    facts = facts.withHint(hint.get().tokens(), hint.get().kind());
                }
                if (cmd.selfSized() && stated.contextTokens() != null) {
                    served = cmd.withMaxModelLen(stated.contextTokens());
                }
            }
            return new Launch(new Live(handle, served, logRelative, facts, stated), null);
        }
        StepFailure f = Judge.startup(
                profile,
                ready,
                lines,
                (cmd.host().contains(":") ? "[" + cmd.host() + "]" : cmd.host()) + ":" + cmd.port());
        Scenario.Server server = StepRecords.server(handle, ready, capacity.merge(f.named()));
        if (f.named().limit() != null) {
            server = server.withHint(f.named().maxContextHint(), f.named().hintKind());
        }
        Live live = new Live(handle, cmd, logRelative, server, ServedCapacity.NONE);
        return new Launch(
                null,
                stop(StepRecords.failed(point, cmd, logRelative, server, f).build(), live));
    }

    private static List<String> lines(ServerHandle handle) {
        return handle.log() == null ? List.of() : ServerLog.lines(handle.log());
    }

    /** Sends warm-up then measured requests to a live server and judges them. */
    Scenario measure(Backend backend, EngineProfile profile, Live live, Point point) throws InterruptedException {
        ServerCommand cmd = live.command();
        long target = point.target();
        String baseUrl = live.handle().endpoint().baseUrl();
        Experiment.Load load = experiment.load();
        ServedCapacity stated = live.stated();
        TokenRange ids = backend.tokenIds() != null
                ? new TokenRange(backend.tokenIds().from(), backend.tokenIds().to())
                : profile.tokenRange(stated);
        List<String> warnings = new ArrayList<>();
        if (stated.maxPromptTokens() != null && stated.maxPromptTokens() < target) {
            warnings.add(String.format(
                            Locale.ROOT,
                            "before sending: the server states a limit of %,d prompt tokens (%s), below the target"
                                    + " of %,d",
                            stated.maxPromptTokens(),
                            String.join(", ", stated.sources()),
                            target)
                    + profile.explainLimit(stated, cmd.maxModelLen())
                            .map(why -> ": " + why)
                            .orElse(""));
        }
        String apiKey = apiKey(backend);
        // A probe of the capacity map sends its N distinct prompts at once (docs/search.md#the-capacity-map);
        // load's own numbers are the single-prompt frontier's.
        boolean concurrent = point.concurrency() > 1;
        LoadPlan plan = new LoadPlan(
                baseUrl,
                servedModel(backend, live, baseUrl, apiKey),
                target,
                load.outputLen(),
                concurrent ? point.concurrency() : load.numPrompts(),
                concurrent ? point.concurrency() : load.maxConcurrency(),
                concurrent ? Double.POSITIVE_INFINITY : load.requestRate(),
                load.warmup(),
                ids,
                experiment.timeouts().request(),
                apiKey,
                ReadLimits.of(
                        experiment.limits().responseMib(), experiment.limits().eventKib(), load.outputLen()));
        PasskeyCheck.Prepared check = backend.check() == null || concurrent
                ? null
                : passkey.prepare(
                        backend, profile, client, plan, experiment.timeouts().request());
        if (check != null && check.prompt() != null) {
            plan = withPasskey(plan, check);
        }
        ProgressWatch watch = ProgressWatch.start(
                live.handle(),
                profile.progress(),
                client.queries(baseUrl, STATED_TIMEOUT, apiKey),
                experiment.timeouts().progress(),
                concurrent);
        LoadResult result;
        Optional<ProgressWatch.Verdict> stuck;
        try {
            result = send(backend, live, target, plan);
        } finally {
            stuck = watch.close();
        }
        Optional<EngineCount> counted = stuck.isPresent() ? Optional.empty() : watch.counted();
        List<Scenario.Request> requests = new ArrayList<>();
        result.warmup().forEach(r -> requests.add(StepRecords.request(r)));
        result.measured().forEach(r -> requests.add(StepRecords.request(r)));

        List<String> log = lines(live.handle());
        Optional<StepFailure> f = Judge.requests(new Judge.Observation(
                profile,
                target,
                load.lenientVerify(),
                experiment.timeouts().request(),
                result.warmup(),
                result.measured(),
                log,
                endedWhileServing(profile, live.handle(), result),
                stated,
                cmd.maxModelLen()));
        if (stuck.isPresent()) {
            // The watch stopped the server to end requests that made no progress: their errors are its doing.
            Phase phase = result.warmup().stream().allMatch(RequestRecord::ok) ? Phase.MEASURE : Phase.WARMUP;
            f = Optional.of(Judge.noProgress(stuck.get(), phase, target, stated));
        } else if (f.isEmpty() && concurrent) {
            f = HeldAtOnce.judge(result.measured(), stated, profile.preempts());
            boolean held = f.isEmpty();
            counted.flatMap(c -> EngineCounts.disagreement(c, point.concurrency(), held))
                    .ifPresent(warnings::add);
        }
        profile.kvFullWarning(log).ifPresent(warnings::add);
        if (f.isEmpty() && beyondTraining(stated, target)) {
            warnings.add(String.format(
                    Locale.ROOT,
                    "served beyond the model's training context of %,d tokens (n_ctx_train)%s",
                    stated.trainContextTokens(),
                    cmd.argv().stream().anyMatch(a -> a.startsWith("--rope-") || a.startsWith("--yarn-"))
                            ? ", with rope scaling asked for: check that answers hold there (check: passkey)"
                            : " without rope scaling: answers past it may be noise; this build does not cap the"
                                    + " context at it"));
        }
        StepMetrics metrics = (load.lenientVerify()
                        ? StepMetrics.from(result.measured(), RequestRecord::ok)
                        : StepMetrics.from(result.measured()))
                .orElse(null);
        Scenario.Server server = live.facts();
        if (f.isPresent() && f.get().named().limit() != null && server != null) {
            server = server.withHint(
                    f.get().named().maxContextHint(), f.get().named().hintKind());
        }
        Scenario.Builder step = f.isPresent()
                ? StepRecords.failed(point, cmd, live.logRelative(), server, f.get())
                : StepRecords.base(point, cmd).server(server, live.logRelative());
        if (check != null && f.isEmpty()) {
            // Only a served step has an answer; a wrong one leaves its outcome as it is.
            PasskeyCheck.Judged judged = passkey.judge(check, point, result.measured());
            step.answer(judged.answer(), judged.ms());
        }
        return step.measured(metrics, StepRecords.verification(result.measured(), target), requests, warnings)
                .engineCount(counted.orElse(null))
                .build();
    }

    /** Sends the step's requests, telling the listener when each goes out and when its first token comes. */
    private LoadResult send(Backend backend, Live live, long target, LoadPlan plan) throws InterruptedException {
        return client.send(plan, new RequestObserver() {
            @Override
            public void sending(int index, boolean warmup) {
                listener.stepPhase(
                        backend.name(), target, StepPhase.PREFILL, live.handle().log());
            }

            @Override
            public void firstToken(int index, boolean warmup) {
                listener.stepPhase(
                        backend.name(),
                        target,
                        StepPhase.DECODING,
                        live.handle().log());
            }
        });
    }

    /** A prompt above the training context the server named, which no cap of its own kept it from serving. */
    private static boolean beyondTraining(ServedCapacity stated, long target) {
        Long train = stated.trainContextTokens();
        return train != null && target > train;
    }

    private static LoadPlan withPasskey(LoadPlan plan, PasskeyCheck.Prepared check) {
        return new LoadPlan(
                plan.baseUrl(),
                plan.model(),
                plan.targetLen(),
                plan.outputLen(),
                plan.numPrompts(),
                plan.maxConcurrency(),
                plan.requestRate(),
                plan.warmup(),
                plan.range(),
                plan.requestTimeout(),
                plan.apiKey(),
                plan.limits(),
                check.prompt());
    }

    // A failed request may mean the server is dying; the judgement needs to know whether it did.
    private static Termination endedWhileServing(EngineProfile profile, ServerHandle h, LoadResult result)
            throws InterruptedException {
        boolean suspicious = false;
        for (RequestRecord r : result.warmup()) {
            suspicious |= Judge.mayMeanCrash(profile, r);
        }
        for (RequestRecord r : result.measured()) {
            suspicious |= Judge.mayMeanCrash(profile, r);
        }
        if (!suspicious) {
            return h.termination().orElse(null);
        }
        return h.isAlive()
                ? h.awaitExit(CRASH_GRACE.plus(h.exitNoticeDelay())).orElse(null)
                : h.termination().orElse(null);
    }

    // vLLM answers only to the name it serves; the experiment's model is the fallback when /v1/models cannot be
    // asked. A fault of ctxprobe's own is not such a case: it must surface as client_error.
    // A server whose health check said 200 before its model can serve answers 503 here: it is asked again for what
    // is left of its startup time (at least 10 s), so that the step waits longer rather than fails.
    private String servedModel(Backend backend, Live live, String baseUrl, String apiKey) throws InterruptedException {
        Duration within = MODEL_WAIT;
        if (live.facts() != null && live.facts().startupS() != null) {
            Duration left = backend.startup()
                    .minus(Duration.ofMillis((long) (live.facts().startupS() * 1000)));
            within = left.compareTo(MODEL_WAIT) > 0 ? left : MODEL_WAIT;
        }
        String id = client.servedModel(baseUrl, apiKey, within);
        return id != null ? id : experiment.model();
    }

    // The file names the variable, never the key; the value is read only here, when it is sent.
    private static String apiKey(Backend backend) {
        return backend.apiKeyEnv() == null ? null : System.getenv(backend.apiKeyEnv());
    }

    /** Stops a kept server whose last step is already recorded, and says what the stop showed. */
    StopReport stopKept(String backend, Live live) {
        listener.stepPhase(
                backend,
                live.command().targetLen(),
                StepPhase.STOPPING,
                live.handle().log());
        return live.handle().stop();
    }

    /** Stops the step's server and adds what the stop showed: every process gone or not, the memory it left. */
    Scenario stop(Scenario s, Live live) {
        listener.stepPhase(
                s.backend(), s.targetLen(), StepPhase.STOPPING, live.handle().log());
        return StepRecords.stopped(s, live.handle().stop());
    }

    /**
     * The step that was running when the user stopped the run, in the phase it was in: a Ctrl-C while a slow
     * engine loads must not read as one during the requests.
     */
    Scenario interrupted(Live live, Point point, Phase phase) {
        return stop(
                StepRecords.interrupted(point, live.command(), live.logRelative(), live.facts(), phase)
                        .build(),
                live);
    }

    /** Carries the step of a run that the user interrupted. */
    static final class StepInterrupted extends InterruptedException {
        private static final long serialVersionUID = 1L;
        private final transient Scenario scenario;

        StepInterrupted(Scenario scenario, InterruptedException cause) {
            super("interrupted");
            this.scenario = scenario;
            initCause(cause);
        }

        Scenario scenario() {
            return scenario;
        }
    }
}
