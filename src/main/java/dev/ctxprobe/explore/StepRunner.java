package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.ModelDiscovery;
import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engine.Capacity;
import dev.ctxprobe.engine.Diagnosis;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.FailureClass;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.launch.LaunchSpec;
import dev.ctxprobe.launch.Launcher;
import dev.ctxprobe.launch.Ports;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.ServerLog;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.Scenario;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs one step (spec 05): preflight, launch, readiness, warm-up, measure, stop, verify gone; or, for a server
 * kept alive across steps, only the requests. Every outcome, including ctxprobe's own faults, becomes a
 * {@link Scenario} with one failure class.
 */
final class StepRunner {
    private static final Duration CRASH_GRACE = Duration.ofSeconds(2);

    private final Experiment experiment;
    private final Launcher launcher;
    private final Path runDir;
    private final GpuHygiene gpu;

    StepRunner(Experiment experiment, Launcher launcher, Path runDir, GpuHygiene gpu) {
        this.experiment = experiment;
        this.launcher = launcher;
        this.runDir = runDir;
        this.gpu = gpu;
    }

    /** A server that is up, with what its startup taught. */
    record Live(ServerHandle handle, ServerCommand command, String logRelative, Scenario.Server facts) {}

    /** How a launch ended: a live server, or a failed scenario. */
    record Launch(Live live, Scenario failed) {}

    /** A step with a server of its own: launch at {@code target + pad}, measure, stop. */
    Scenario run(Backend backend, EngineProfile profile, long target) throws InterruptedException {
        Launch launch = launch(backend, profile, target);
        if (launch.failed() != null) {
            return launch.failed();
        }
        Live live = launch.live();
        Scenario measured;
        try {
            measured = measure(backend, profile, live, target);
        } catch (InterruptedException e) {
            throw new StepInterrupted(interrupted(backend, live, target, Phase.MEASURE), e);
        } catch (RuntimeException e) {
            // A fault of ctxprobe's own must still stop the server it started and leave a classified step.
            return stop(
                    clientError(backend, live.command(), target, live.logRelative(), live.facts(), Phase.MEASURE, e),
                    live.handle());
        }
        return stop(measured, live.handle());
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

    /** A step that failed because ctxprobe itself did: never hidden behind another class (spec 05). */
    Scenario clientError(
            Backend backend,
            ServerCommand cmd,
            long target,
            String logRelative,
            Scenario.Server server,
            Phase phase,
            RuntimeException e) {
        StepFailure f = StepFailure.of(
                FailureClass.CLIENT_ERROR,
                phase,
                "ctxprobe itself failed (" + e + "); this is a bug in ctxprobe, please report it with the log",
                stackHead(e));
        return failed(backend, cmd, target, logRelative, server, f, null);
    }

    /** Starts a server for {@code target} and waits until it is ready. */
    Launch launch(Backend backend, EngineProfile profile, long target) throws InterruptedException {
        int port = backend.port() != null ? backend.port() : Ports.free();
        ServerCommand cmd = ServerCommand.resolve(experiment, backend, target, port);
        String logRelative = freshLog(backend.name() + "_ctx_" + target);
        Path log = runDir.resolve(logRelative);
        if (!profile.launchesServer()) {
            return new Launch(new Live(null, cmd, null, null), null);
        }
        if (Ports.busy(backend.host(), port)) {
            StepFailure f = StepFailure.of(
                    FailureClass.PORT_BUSY,
                    Phase.PREFLIGHT,
                    "port " + port + " on " + backend.host()
                            + " is already taken by another process; stop it (a stale server?) or choose another port",
                    List.of("connect to " + Ports.connectHost(backend.host()) + ":" + port
                            + " succeeded before launch"));
            return new Launch(null, failed(backend, cmd, cmd.targetLen(), null, null, f, null));
        }
        StepFailure busy = gpu.preflight(backend.env());
        if (busy != null) {
            return new Launch(null, failed(backend, cmd, cmd.targetLen(), null, null, busy, null));
        }
        List<Long> memoryBefore = gpu.usedMiB();
        LaunchSpec spec = new LaunchSpec(
                cmd.argv(),
                backend.env(),
                log,
                backend.host(),
                port,
                backend.healthPath() != null ? backend.healthPath() : profile.readinessPath(),
                backend.startup(),
                experiment.timeouts().shutdown());
        ServerHandle handle;
        try {
            handle = launcher.launch(spec);
        } catch (IOException e) {
            StepFailure f = StepFailure.of(
                    FailureClass.STARTUP_CRASH,
                    Phase.STARTUP,
                    "the command could not be started (" + e.getMessage() + "); check that '"
                            + cmd.argv().getFirst() + "' is installed and on PATH",
                    List.of(String.valueOf(e)));
            return new Launch(null, failed(backend, cmd, cmd.targetLen(), null, null, f, null));
        }
        try {
            return awaitReady(backend, profile, cmd, handle, logRelative, memoryBefore);
        } catch (InterruptedException e) {
            Live live = new Live(handle, cmd, logRelative, facts(handle, null, Capacity.NONE, memoryBefore));
            throw new StepInterrupted(interrupted(backend, live, target, Phase.READINESS), e);
        } catch (RuntimeException e) {
            // Whatever broke in ctxprobe, the server it started must not outlive the step.
            Scenario.Server facts = facts(handle, null, Capacity.NONE, memoryBefore);
            return new Launch(
                    null,
                    stop(clientError(backend, cmd, cmd.targetLen(), logRelative, facts, Phase.READINESS, e), handle));
        }
    }

    private Launch awaitReady(
            Backend backend,
            EngineProfile profile,
            ServerCommand cmd,
            ServerHandle handle,
            String logRelative,
            List<Long> memoryBefore)
            throws InterruptedException {
        Readiness ready = handle.awaitReady();
        List<String> lines = ServerLog.lines(runDir.resolve(logRelative));
        Capacity capacity = profile.readCapacity(lines);
        if (ready instanceof Readiness.Ready r) {
            return new Launch(new Live(handle, cmd, logRelative, facts(handle, r, capacity, memoryBefore)), null);
        }
        Integer exit = ready instanceof Readiness.Exited x ? x.exitCode() : null;
        Diagnosis d = profile.diagnoseStartup(exit, lines).orElseGet(() -> fallbackStartup(exit, ready, lines));
        Phase phase = exit == null ? Phase.READINESS : Phase.STARTUP;
        StepFailure f = new StepFailure(
                        d.failureClass(),
                        phase,
                        d.detail(),
                        d.evidence(),
                        exit,
                        d.maxContextHint(),
                        d.kvCapacityTokens())
                .withExitCode(exit);
        Scenario.Server server =
                facts(handle, ready, capacity.merge(d.kvCapacityTokens(), d.maxContextHint()), memoryBefore);
        return new Launch(null, stop(failed(backend, cmd, cmd.targetLen(), logRelative, server, f, null), handle));
    }

    private Diagnosis fallbackStartup(Integer exit, Readiness ready, List<String> lines) {
        List<String> tail = tail(lines, 8);
        if (exit == null) {
            return new Diagnosis(
                    FailureClass.STARTUP_TIMEOUT,
                    "not ready after " + seconds(ready.after()) + " s (last answer: "
                            + ((Readiness.TimedOut) ready).lastAnswer()
                            + "); raise timeouts.startup_s if loading is slow",
                    tail,
                    null,
                    null);
        }
        return new Diagnosis(
                FailureClass.STARTUP_CRASH,
                "the server exited with code " + exit + " during startup; see the log's last lines",
                tail,
                null,
                null);
    }

    /** Sends warm-up then measured requests to a live server and judges them. */
    Scenario measure(Backend backend, EngineProfile profile, Live live, long target) throws InterruptedException {
        ServerCommand cmd = live.command();
        String baseUrl = "http://" + Ports.connectHost(cmd.host()) + ":" + cmd.port();
        Experiment.Load load = experiment.load();
        TokenRange ids = backend.tokenIds() != null
                ? new TokenRange(backend.tokenIds().from(), backend.tokenIds().to())
                : new TokenRange(profile.tokenRange().lo(), profile.tokenRange().hiExclusive());
        LoadPlan plan = new LoadPlan(
                baseUrl,
                servedModel(baseUrl, apiKey(backend)),
                target,
                load.outputLen(),
                load.numPrompts(),
                load.maxConcurrency(),
                load.requestRate(),
                load.warmup(),
                ids,
                experiment.timeouts().request(),
                apiKey(backend));
        LoadResult result;
        try {
            result = new LoadRunner(plan).run();
        } catch (InterruptedException e) {
            throw e;
        } catch (RuntimeException e) {
            StepFailure f = StepFailure.of(
                    FailureClass.CLIENT_ERROR,
                    Phase.MEASURE,
                    "ctxprobe's client failed (" + e + "); this is a bug in ctxprobe, please report it with the log",
                    stackHead(e));
            return failed(backend, cmd, target, live.logRelative(), live.facts(), f, null);
        }
        List<Scenario.Request> requests = new ArrayList<>();
        result.warmup().forEach(r -> requests.add(request(r)));
        result.measured().forEach(r -> requests.add(request(r)));

        StepFailure f = judge(result.warmup(), Phase.WARMUP, profile, live, target);
        if (f == null) {
            f = judge(result.measured(), Phase.MEASURE, profile, live, target);
        }
        Scenario.Verification verification = verification(result.measured(), target);
        StepMetrics metrics = (experiment.load().lenientVerify()
                        ? StepMetrics.from(result.measured(), RequestRecord::ok)
                        : StepMetrics.from(result.measured()))
                .orElse(null);
        Scenario.Server server = live.facts();
        if (f != null && f.maxContextHint() != null && server != null) {
            server = server.withHint(f.maxContextHint());
        }
        if (f == null) {
            return new Scenario(
                    backend.name(),
                    target,
                    cmd.maxModelLen(),
                    true,
                    cmd.serverArgs(),
                    metrics,
                    null,
                    "ok",
                    null,
                    server,
                    verification,
                    live.logRelative(),
                    requests);
        }
        Scenario s = failed(backend, cmd, target, live.logRelative(), server, f, requests);
        return new Scenario(
                s.backend(),
                s.targetLen(),
                s.maxModelLen(),
                false,
                s.serverArgs(),
                metrics,
                s.error(),
                s.outcome(),
                s.failure(),
                s.server(),
                verification,
                s.log(),
                requests);
    }

    /** The first failing request of {@code records}, classified; null when all passed. */
    private StepFailure judge(List<RequestRecord> records, Phase phase, EngineProfile profile, Live live, long target)
            throws InterruptedException {
        for (RequestRecord r : records) {
            if (!r.ok()) {
                return classifyRequest(r, phase, profile, live);
            }
            if (profile.emptyAnswerMeansTooLong() && r.completionTokens() != null && r.completionTokens() == 0) {
                return StepFailure.of(
                        FailureClass.TRUNCATED,
                        phase,
                        "the server answered 200 with an empty text and no completion tokens, which " + profile.name()
                                + " does when the prompt exceeds its session length",
                        List.of("usage: prompt_tokens=" + r.promptTokens() + " completion_tokens=0"));
            }
            if (experiment.load().lenientVerify()) {
                continue;
            }
            if (r.promptTokens() == null) {
                return StepFailure.of(
                        FailureClass.TOKEN_MISMATCH,
                        phase,
                        "the server reported no usage.prompt_tokens, so the length cannot be verified;"
                                + " set load.verify: lenient to accept unverified lengths",
                        List.of("request " + r.index() + ": no usage in the answer"));
            }
            if (r.promptTokens().longValue() != target) {
                boolean fewer = r.promptTokens() < target;
                return StepFailure.of(
                        fewer ? FailureClass.TRUNCATED : FailureClass.TOKEN_MISMATCH,
                        phase,
                        String.format(
                                Locale.ROOT,
                                "the server counted %,d prompt tokens for %,d sent%s",
                                r.promptTokens(),
                                target,
                                fewer
                                        ? ": it truncated the prompt (context shift on?)"
                                        : ": it added tokens (a BOS?); set load.verify: lenient if that is expected"),
                        List.of("usage: prompt_tokens=" + r.promptTokens() + " target=" + target));
            }
        }
        return null;
    }

    private StepFailure classifyRequest(RequestRecord r, Phase phase, EngineProfile profile, Live live)
            throws InterruptedException {
        ServerHandle h = live.handle();
        switch (r.outcome()) {
            case TIMEOUT -> {
                return StepFailure.of(
                        FailureClass.TIMEOUT,
                        phase,
                        "no complete answer within "
                                + seconds(experiment.timeouts().request()) + " s ("
                                + r.bytesReceived() + " bytes received); the server hangs or the prefill is slower"
                                + " than timeouts.request_s",
                        List.of(String.valueOf(r.errorText())));
            }
            case HTTP_STATUS, ERROR_EVENT -> {
                Diagnosis d = profile.diagnoseResponse(r.httpStatus(), r.errorText());
                // vLLM answers 500 and SGLang sends an error event as their engine dies: a dead server is a crash.
                // A refusal that names the length is the engine's answer and needs no wait for an exit.
                if (h != null
                        && d.failureClass() != FailureClass.REQUEST_REJECTED
                        && (r.httpStatus() >= 500 || r.outcome() == RequestOutcome.ERROR_EVENT)
                        && (!h.isAlive() || h.awaitExit(CRASH_GRACE))) {
                    return crashed(r, phase, live);
                }
                return new StepFailure(
                        d.failureClass(),
                        phase,
                        d.detail(),
                        d.evidence(),
                        null,
                        d.maxContextHint(),
                        d.kvCapacityTokens());
            }
            default -> {
                if (h != null && (!h.isAlive() || h.awaitExit(CRASH_GRACE))) {
                    return crashed(r, phase, live);
                }
                return StepFailure.of(
                        FailureClass.HTTP_ERROR,
                        phase,
                        "the answer was not a valid completion stream ("
                                + r.outcome().name().toLowerCase(Locale.ROOT) + ": " + r.errorText() + ")",
                        List.of(String.valueOf(r.errorText())));
            }
        }
    }

    // vLLM answers only to the name it serves; the experiment's model is the fallback when /v1/models is silent.
    private String servedModel(String baseUrl, String apiKey) {
        try {
            return ModelDiscovery.firstModelId(baseUrl, Duration.ofSeconds(10), apiKey);
        } catch (IOException | RuntimeException e) {
            return experiment.model();
        }
    }

    // The file names the variable, never the key (spec 02); the value is read only here, when it is sent.
    private static String apiKey(Backend backend) {
        return backend.apiKeyEnv() == null ? null : System.getenv(backend.apiKeyEnv());
    }

    private StepFailure crashed(RequestRecord r, Phase phase, Live live) {
        int code = live.handle().exitCode().orElse(-1);
        List<String> evidence = new ArrayList<>();
        evidence.add("client: " + r.errorText());
        evidence.addAll(tail(ServerLog.lines(runDir.resolve(live.logRelative())), 8));
        return StepFailure.of(
                        FailureClass.SERVER_CRASH,
                        phase,
                        "the server died while serving (exit code " + code + ")"
                                + (code == 137 ? ", killed: out of memory?" : ""),
                        evidence)
                .withExitCode(code);
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

    /** Stops the step's server and records how: the group gone or not, and the memory it left. */
    Scenario stop(Scenario s, ServerHandle handle) {
        StopReport stop = handle.stop();
        return stopped(s, stop, gpu.usedMiB());
    }

    /** Adds what the stop showed to a finished step. */
    private static Scenario stopped(Scenario s, StopReport stop, List<Long> memoryAfter) {
        Scenario.Server old = s.server() != null ? s.server() : Scenario.Server.ofHints(null, null);
        Scenario.Server server = old.withStop(stop.exitCode(), stop.stoppedCleanly(), stop.leftoverPids(), memoryAfter);
        return new Scenario(
                s.backend(),
                s.targetLen(),
                s.maxModelLen(),
                s.success(),
                s.serverArgs(),
                s.metrics(),
                s.error(),
                s.outcome(),
                s.failure(),
                server,
                s.verification(),
                s.log(),
                s.requests());
    }

    /**
     * The step that was running when the user stopped the run, in the phase it was in: a Ctrl-C while a slow
     * engine loads must not read as one during the requests.
     */
    Scenario interrupted(Backend backend, Live live, long target, Phase phase) {
        StepFailure f = StepFailure.of(
                FailureClass.INTERRUPTED, phase, "the run was interrupted; --resume runs this step again", List.of());
        Scenario s = failed(backend, live.command(), target, live.logRelative(), live.facts(), f, null);
        return stop(s, live.handle());
    }

    Scenario failed(
            Backend backend,
            ServerCommand cmd,
            long target,
            String logRelative,
            Scenario.Server server,
            StepFailure f,
            List<Scenario.Request> requests) {
        Scenario.Failure failure = new Scenario.Failure(
                f.phase().id(), f.failureClass().id(), f.detail(), f.evidence(), logRelative, f.exitCode());
        Scenario.Server s = server;
        if (s == null && (f.maxContextHint() != null || f.kvCapacityTokens() != null)) {
            s = Scenario.Server.ofHints(f.kvCapacityTokens(), f.maxContextHint());
        }
        return new Scenario(
                backend.name(),
                target,
                cmd.maxModelLen(),
                false,
                cmd.serverArgs(),
                null,
                f.sentence(),
                f.failureClass().id(),
                failure,
                s,
                null,
                logRelative,
                requests == null ? List.of() : requests);
    }

    private static Scenario.Server facts(ServerHandle h, Readiness ready, Capacity capacity, List<Long> memoryBefore) {
        return new Scenario.Server(
                ready == null ? null : seconds(ready.after()),
                ready instanceof Readiness.Ready r ? r.via() : null,
                h.pid(),
                null,
                null,
                List.of(),
                capacity.kvCapacityTokens(),
                capacity.maxContextHint(),
                memoryBefore,
                null);
    }

    private static List<String> tail(List<String> lines, int n) {
        List<String> meaningful = lines.stream().filter(l -> !l.isBlank()).toList();
        return meaningful.subList(Math.max(0, meaningful.size() - n), meaningful.size());
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

    static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }

    /** Carries the scenario of a step that the user interrupted. */
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
