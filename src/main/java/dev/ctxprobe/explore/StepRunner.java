package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.ModelDiscovery;
import dev.ctxprobe.client.ReadLimits;
import dev.ctxprobe.client.RequestObserver;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.ServerQueries;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.Capacity;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Limit;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.engine.ServedCapacity;
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
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Scenario;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * ctxprobe's own faults included, becomes a {@link Scenario}.
 */
final class StepRunner {
    // A failed request may mean the server is dying: give it this long to exit before judging.
    private static final Duration CRASH_GRACE = Duration.ofSeconds(2);
    // Each question to a ready server about its limits; one that does not answer in time states nothing.
    private static final Duration STATED_TIMEOUT = Duration.ofSeconds(5);

    // How long the served model's name is asked for at least.
    private static final Duration MODEL_WAIT = Duration.ofSeconds(10);

    private final Experiment experiment;
    private final Function<Backend, Launcher> launchers;
    private final Path runDir;
    private final RunListener listener;

    StepRunner(Experiment experiment, Function<Backend, Launcher> launchers, Path runDir, RunListener listener) {
        this.experiment = experiment;
        this.launchers = launchers;
        this.runDir = runDir;
        this.listener = listener;
    }

    /**
     * A server that is up, with what its startup taught.
     *
     * @param handle null for an endpoint ctxprobe did not launch
     */
    record Live(
            ServerHandle handle, Endpoint endpoint, ServerCommand command, String logRelative, Scenario.Server facts) {}

    /** How a launch ended: a live server, or a failed step. */
    record Launch(Live live, Scenario failed) {}

    /** A step with a server of its own: launch at {@code target + pad}, measure, stop. */
    Scenario run(Backend backend, EngineProfile profile, long target) throws StepInterrupted {
        Launch launch = launch(backend, profile, target);
        if (launch.failed() != null) {
            return launch.failed();
        }
        return measureThenStop(backend, profile, launch.live(), target);
    }

    /**
     * The search's first step where the engine sizes itself: a server launched with {@code {max_model_len}} =
     * {@code auto}, measured at the target that the length it fitted allows ({@code targetFor} of the stated
     * max_model_len; {@code highest} when it stated none). The step's max_model_len is the fitted one.
     */
    Scenario runSelfSized(Backend backend, EngineProfile profile, long highest, LongUnaryOperator targetFor)
            throws StepInterrupted {
        Launch launch = launch(backend, profile, highest, true);
        if (launch.failed() != null) {
            return launch.failed();
        }
        Live started = launch.live();
        long target = started.command().selfSized()
                ? highest
                : targetFor.applyAsLong(started.command().maxModelLen());
        Live live = new Live(
                started.handle(),
                started.endpoint(),
                started.command().withTarget(target),
                started.logRelative(),
                started.facts());
        return measureThenStop(backend, profile, live, target);
    }

    /** Measures a live server at {@code target}, then stops it, whatever the measurement did. */
    private Scenario measureThenStop(Backend backend, EngineProfile profile, Live live, long target)
            throws StepInterrupted {
        Scenario measured;
        try {
            measured = measure(backend, profile, live, target);
        } catch (InterruptedException e) {
            throw new StepInterrupted(interrupted(backend, live, target, Phase.MEASURE), e);
        } catch (RuntimeException | Error e) {
            // A fault of ctxprobe's own, an OutOfMemoryError too, must still stop the server it started and leave a
            // classified step.
            return stop(
                    clientError(backend, live.command(), target, live.logRelative(), live.facts(), Phase.MEASURE, e),
                    live);
        }
        return stop(measured, live);
    }

    /** A step that failed because ctxprobe itself did: never hidden behind another class. */
    Scenario clientError(
            Backend backend,
            ServerCommand cmd,
            long target,
            String logRelative,
            Scenario.Server server,
            Phase phase,
            Throwable e) {
        StepFailure f = StepFailure.of(
                FailureClass.CLIENT_ERROR,
                phase,
                "ctxprobe itself failed (" + cause(e)
                        + "); this is a bug in ctxprobe, please report it with the evidence and the log",
                stackHead(e));
        return failed(backend, cmd, target, logRelative, server, f).build();
    }

    /** Resolves the step's command; the port is the backend's, or a free one picked for this launch. */
    ServerCommand command(Backend backend, long target) {
        int port = backend.port() != null ? backend.port() : Ports.free();
        return ServerCommand.resolve(experiment, backend, target, port);
    }

    /** Starts a server for {@code target} and waits until it is ready. */
    Launch launch(Backend backend, EngineProfile profile, long target) throws StepInterrupted {
        return launch(backend, profile, target, false);
    }

    /**
     * Starts a server for {@code target}, or with {@code selfSized} one that fits its context to memory itself
     * ({@code {max_model_len}} is the profile's {@link EngineProfile#autoLength}), and waits until it is ready.
     */
    Launch launch(Backend backend, EngineProfile profile, long target, boolean selfSized) throws StepInterrupted {
        ServerCommand cmd = selfSized
                ? ServerCommand.resolve(
                        experiment,
                        backend,
                        target,
                        backend.port() != null ? backend.port() : Ports.free(),
                        profile.autoLength())
                : command(backend, target);
        if (!profile.launchesServer()) {
            Endpoint endpoint = new Endpoint(Ports.connectHost(cmd.host()), cmd.port());
            listener.stepPhase(backend.name(), target, StepPhase.READY, null);
            return new Launch(new Live(null, endpoint, cmd, null, null), null);
        }
        Launcher launcher = launchers.apply(backend);
        String logRelative = freshLog(backend.name() + "_ctx_" + target);
        LaunchSpec spec = new LaunchSpec(
                backend.name() + "_ctx_" + target,
                cmd.argv(),
                backend.env(),
                runDir.resolve(logRelative),
                backend.host(),
                cmd.port(),
                backend.healthPath() != null ? backend.healthPath() : profile.readinessPath(),
                profile.readyLines(),
                backend.startup(),
                experiment.timeouts().shutdown(),
                experiment.timeouts().queue());
        Optional<Refusal> refused;
        listener.stepPhase(backend.name(), target, StepPhase.QUEUED, null);
        try {
            refused = launcher.preflight(spec);
        } catch (InterruptedException e) {
            StepFailure f = StepFailure.of(
                    FailureClass.INTERRUPTED,
                    Phase.PREFLIGHT,
                    "the run was interrupted; --resume runs this step again",
                    List.of());
            throw new StepInterrupted(
                    failed(backend, cmd, target, null, null, f).build(), e);
        }
        if (refused.isPresent()) {
            return new Launch(null, refusal(backend, cmd, Phase.PREFLIGHT, refused.get()));
        }
        ServerHandle handle;
        listener.stepPhase(backend.name(), target, StepPhase.LAUNCHING, null);
        try {
            handle = launcher.launch(spec);
        } catch (LaunchException e) {
            return new Launch(null, refusal(backend, cmd, Phase.STARTUP, e.refusal()));
        }
        listener.stepPhase(backend.name(), target, StepPhase.LOADING, handle.log());
        try {
            return awaitReady(backend, profile, cmd, handle, logRelative);
        } catch (InterruptedException e) {
            Live live = new Live(handle, handle.endpoint(), cmd, logRelative, facts(handle, null, Capacity.NONE));
            throw new StepInterrupted(interrupted(backend, live, target, Phase.READINESS), e);
        } catch (RuntimeException | Error e) {
            // Whatever broke in ctxprobe, the server it started must not outlive the step.
            Scenario.Server started = facts(handle, null, Capacity.NONE);
            Live live = new Live(handle, handle.endpoint(), cmd, logRelative, started);
            return new Launch(
                    null, stop(clientError(backend, cmd, target, logRelative, started, Phase.READINESS, e), live));
        }
    }

    private Scenario refusal(Backend backend, ServerCommand cmd, Phase phase, Refusal r) {
        StepFailure f = StepFailure.of(r.failureClass(), phase, r.detail(), r.evidence());
        return failed(backend, cmd, cmd.targetLen(), null, null, f).build();
    }

    // Each launch gets its own log: a relaunch for the same length (restart: on_failure after a crash, --resume)
    // must not overwrite the log an earlier step's evidence points to.
    private String freshLog(String stem) {
        String name = "logs/" + stem + ".log";
        for (int n = 2; Files.exists(runDir.resolve(name)); n++) {
            name = "logs/" + stem + "." + n + ".log";
        }
        return name;
    }

    private Launch awaitReady(
            Backend backend, EngineProfile profile, ServerCommand cmd, ServerHandle handle, String logRelative)
            throws InterruptedException {
        Readiness ready = handle.awaitReady();
        List<String> lines = ServerLog.lines(handle.log());
        Capacity capacity = profile.readCapacity(lines);
        if (ready instanceof Readiness.Ready r) {
            listener.stepPhase(backend.name(), cmd.targetLen(), StepPhase.READY, handle.log());
            Scenario.Server facts = facts(handle, r, capacity);
            ServedCapacity stated = stated(profile, handle.endpoint(), lines, backend);
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
            return new Launch(new Live(handle, handle.endpoint(), served, logRelative, facts), null);
        }
        StepFailure f = Judge.startup(profile, ready, lines);
        Scenario.Server server = facts(handle, ready, capacity.merge(f.named()));
        if (f.named().limit() != null) {
            server = server.withHint(f.named().maxContextHint(), f.named().hintKind());
        }
        Live live = new Live(handle, handle.endpoint(), cmd, logRelative, server);
        return new Launch(
                null,
                stop(
                        failed(backend, cmd, cmd.targetLen(), logRelative, server, f)
                                .build(),
                        live));
    }

    // What a ready server states about its limits; asking never fails the step.
    private static ServedCapacity stated(EngineProfile profile, Endpoint endpoint, List<String> log, Backend backend) {
        ServerQueries queries = new ServerQueries(endpoint.baseUrl(), STATED_TIMEOUT, apiKey(backend));
        return profile.statedCapacity(log, queries::get);
    }

    /** Sends warm-up then measured requests to a live server and judges them. */
    Scenario measure(Backend backend, EngineProfile profile, Live live, long target) throws InterruptedException {
        ServerCommand cmd = live.command();
        String baseUrl = live.endpoint().baseUrl();
        Experiment.Load load = experiment.load();
        ServedCapacity stated = live.facts() == null || live.facts().capacity() == null
                ? ServedCapacity.NONE
                : live.facts().capacity();
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
        LoadPlan plan = new LoadPlan(
                baseUrl,
                servedModel(backend, live, baseUrl, apiKey),
                target,
                load.outputLen(),
                load.numPrompts(),
                load.maxConcurrency(),
                load.requestRate(),
                load.warmup(),
                ids,
                experiment.timeouts().request(),
                apiKey,
                ReadLimits.of(
                        experiment.limits().responseMib(), experiment.limits().eventKib(), load.outputLen()));
        Path serverLog = live.handle() == null ? null : live.handle().log();
        LoadResult result = new LoadRunner(plan, new RequestObserver() {
                    @Override
                    public void sending(int index, boolean warmup) {
                        listener.stepPhase(backend.name(), target, StepPhase.PREFILL, serverLog);
                    }

                    @Override
                    public void firstToken(int index, boolean warmup) {
                        listener.stepPhase(backend.name(), target, StepPhase.DECODING, serverLog);
                    }
                })
                .run();
        List<Scenario.Request> requests = new ArrayList<>();
        result.warmup().forEach(r -> requests.add(request(r)));
        result.measured().forEach(r -> requests.add(request(r)));

        Termination ended = endedWhileServing(profile, live.handle(), result);
        List<String> log = live.handle() == null
                ? List.of()
                : ServerLog.lines(live.handle().log());
        Optional<StepFailure> f = Judge.requests(new Judge.Observation(
                profile,
                target,
                load.lenientVerify(),
                experiment.timeouts().request(),
                result.warmup(),
                result.measured(),
                log,
                ended,
                stated,
                cmd.maxModelLen()));
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
                ? failed(backend, cmd, target, live.logRelative(), server, f.get())
                : base(backend, cmd, target).server(server, live.logRelative());
        return step.measured(metrics, verification(result.measured(), target), requests, warnings)
                .build();
    }

    // A failed request may mean the server is dying; the judgement needs to know whether it did.
    private static Termination endedWhileServing(EngineProfile profile, ServerHandle h, LoadResult result)
            throws InterruptedException {
        if (h == null) {
            return null;
        }
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
        String id = ModelDiscovery.awaitModelId(baseUrl, apiKey, within);
        return id != null ? id : experiment.model();
    }

    // The file names the variable, never the key; the value is read only here, when it is sent.
    private static String apiKey(Backend backend) {
        return backend.apiKeyEnv() == null ? null : System.getenv(backend.apiKeyEnv());
    }

    private static Scenario.Verification verification(List<RequestRecord> measured, long target) {
        Long prompt = null;
        Long completion = null;
        boolean exact = !measured.isEmpty();
        for (RequestRecord r : measured) {
            if (r.promptTokens() != null) {
                prompt = prompt == null ? Long.valueOf(r.promptTokens()) : prompt;
                exact &= r.promptTokens().longValue() == target;
            } else {
                exact = false;
            }
            if (r.completionTokens() != null && completion == null) {
                completion = r.completionTokens().longValue();
            }
        }
        return new Scenario.Verification(target, prompt, completion, exact);
    }

    private static Scenario.Request request(RequestRecord r) {
        return new Scenario.Request(
                r.index(),
                r.warmup(),
                r.ok() ? "ok" : r.outcome().name().toLowerCase(Locale.ROOT),
                r.httpStatus(),
                r.ok() ? r.ttftMs() : null,
                r.ok() ? r.e2eMs() : null,
                r.sendMs(),
                r.promptTokens() == null ? null : r.promptTokens().longValue(),
                r.completionTokens() == null ? null : r.completionTokens().longValue());
    }

    /** Stops the step's server and adds what the stop showed: every process gone or not, the memory it left. */
    Scenario stop(Scenario s, Live live) {
        if (live.handle() == null) {
            return s;
        }
        listener.stepPhase(
                s.backend(), s.targetLen(), StepPhase.STOPPING, live.handle().log());
        return stopped(s, live.handle().stop());
    }

    /** A finished step with what its server's stop showed. */
    static Scenario stopped(Scenario s, StopReport stop) {
        Scenario.Server old = s.server() != null ? s.server() : Scenario.Server.ofHints(null, null, null);
        Scenario.Server server = old.withStop(
                stop.ended(),
                stop.stoppedCleanly(),
                stop.leftoverPids(),
                stop.memoryAfterMib(),
                stop.outsideGroupPids());
        return s.toBuilder().server(server, s.log()).build();
    }

    /**
     * The step that was running when the user stopped the run, in the phase it was in: a Ctrl-C while a slow
     * engine loads must not read as one during the requests.
     */
    Scenario interrupted(Backend backend, Live live, long target, Phase phase) {
        StepFailure f = StepFailure.of(
                FailureClass.INTERRUPTED, phase, "the run was interrupted; --resume runs this step again", List.of());
        return stop(
                failed(backend, live.command(), target, live.logRelative(), live.facts(), f)
                        .build(),
                live);
    }

    /**
     * A step that was never launched: its backend stopped before it.
     *
     * @param because the step whose failure stopped the backend
     */
    Scenario skipped(Backend backend, long target, Scenario because) {
        ServerCommand cmd =
                ServerCommand.resolve(experiment, backend, target, backend.port() == null ? 0 : backend.port());
        String why = because.outcome().endsSearch()
                ? "skipped: the step at " + because.targetLen() + " failed with "
                        + because.outcome().id() + ", which says nothing about length, so this backend stopped"
                : "skipped: the step at " + because.targetLen() + " failed and sweep.stop_after_failure is true";
        return base(backend, cmd, target).outcome(Outcome.SKIPPED, why, null).build();
    }

    private static Scenario.Builder base(Backend backend, ServerCommand cmd, long target) {
        return Scenario.builder(backend.name(), target, cmd.maxModelLen(), cmd.serverArgs());
    }

    private static Scenario.Builder failed(
            Backend backend,
            ServerCommand cmd,
            long target,
            String logRelative,
            Scenario.Server server,
            StepFailure f) {
        Scenario.Failure failure = new Scenario.Failure(
                f.phase().id(), f.failureClass().id(), f.detail(), f.evidence(), logRelative, f.exitCode());
        Scenario.Server s = server;
        Capacity named = f.named();
        if (s == null && (named.limit() != null || named.kvCapacityTokens() != null)) {
            s = Scenario.Server.ofHints(named.kvCapacityTokens(), named.maxContextHint(), named.hintKind());
        }
        return base(backend, cmd, target)
                .outcome(Outcome.failed(f.failureClass()), f.sentence(), failure)
                .server(s, logRelative);
    }

    private static Scenario.Server facts(ServerHandle h, Readiness ready, Capacity capacity) {
        // Time in a cluster's queue is not startup: a queue timeout's wait is queued_s, and its startup never began.
        Duration queued = h.queued();
        return new Scenario.Server(
                h.id(),
                ready == null || ready instanceof Readiness.Queued ? null : Judge.seconds(ready.after()),
                queued == null ? null : Judge.seconds(queued),
                ready instanceof Readiness.Ready r ? r.via() : null,
                h.pid(),
                null,
                null,
                null,
                List.of(),
                capacity.kvCapacityTokens(),
                capacity.maxContextHint(),
                null,
                null,
                h.memoryBeforeMib(),
                null,
                List.of());
    }

    // The innermost cause names what really broke (an OutOfMemoryError inside a request thread's wrapper).
    private static String cause(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String detail = root.getMessage() == null ? "no detail" : root.getMessage();
        if (root instanceof OutOfMemoryError) {
            return "it ran out of memory: " + detail
                    + "; give it more with CTXPROBE_JAVA_OPTS=-Xmx..., or lower 'limits' if a server sent that much";
        }
        if (root instanceof StackOverflowError) {
            return "it ran out of stack";
        }
        return detail;
    }

    private static List<String> stackHead(Throwable e) {
        List<String> out = new ArrayList<>();
        out.add(String.valueOf(e));
        for (StackTraceElement el : e.getStackTrace()) {
            if (out.size() >= 8) {
                break;
            }
            out.add("  at " + el);
        }
        return out;
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
