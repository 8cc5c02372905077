package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.ctxprobe.metrics.StepMetrics;
import java.util.List;
import java.util.Map;

/**
 * One step as written in {@code scenarios}: the seeds' keys first ({@code backend} to {@code error}), then
 * ctxprobe's additions. Built with {@link #builder}; read back from ctxprobe's files and from the seeds, whose
 * steps lack the additions (and, in the P800 seed, name {@code max_model_len} {@code max_context_len}).
 *
 * @param success true when the step's measured requests all succeeded with the exact length
 * @param serverArgs the server command, words joined by spaces
 * @param metrics null when no request succeeded
 * @param error one sentence a user can act on, null on success
 * @param outcome ok, skipped, or the failure class; a file without the key gets ok or an unclassified failure
 * @param log the step's server log, relative to the run folder
 * @param requests the individual requests, warm-ups included
 * @param warnings what ctxprobe noticed before the step's answer, e.g. a stated capacity below the target
 * @param concurrency requests sent at once; 1 in files written before it was recorded (the seeds' too)
 * @param params the values of the backend's matrix cell in the experiment's order of its parameters, written only
 *     when the backend has a matrix
 * @param roofline the measured prefill against the hardware's floor (docs/results.md, "% of roofline"); null when
 *     the step measured no prefill or the file predates it
 * @param answer the pass-key check's answer, written only for a backend with {@code check: passkey} whose step
 *     was served
 * @param passkeyMs the time the check added to the step (tokenizing, the control), written with {@code answer}
 * @param engineCount the engine's own count of the requests it ran and queued during a concurrency probe, written
 *     only for a probe of more than one request whose engine shows one (docs/results.md, "engine_count")
 */
public record Scenario(
        String backend,
        long targetLen,
        @JsonAlias("max_context_len") long maxModelLen,
        boolean success,
        String serverArgs,
        StepMetrics metrics,
        String error,
        Outcome outcome,
        Failure failure,
        Server server,
        Verification verification,
        String log,
        List<Request> requests,
        List<String> warnings,
        Integer concurrency,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> params,
        @JsonInclude(JsonInclude.Include.NON_NULL) Roofline roofline,
        @JsonInclude(JsonInclude.Include.NON_NULL) PasskeyAnswer answer,
        @JsonInclude(JsonInclude.Include.NON_NULL) Double passkeyMs,
        @JsonInclude(JsonInclude.Include.NON_NULL) EngineCount engineCount) {

    public Scenario {
        if (outcome == null) {
            outcome = success ? Outcome.OK : Outcome.UNCLASSIFIED;
        }
        requests = requests == null ? List.of() : List.copyOf(requests);
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
        concurrency = concurrency == null ? 1 : concurrency;
        params = params == null || params.isEmpty()
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(params));
    }

    /** What this step measured. */
    public Point point() {
        return new Point(backend, params, targetLen, concurrency);
    }

    /** A single-prompt step of {@code backend} at {@code targetLen}, its server at {@code maxModelLen}. */
    public static Builder builder(String backend, long targetLen, long maxModelLen, String serverArgs) {
        return builder(Point.of(backend, targetLen), maxModelLen, serverArgs);
    }

    /** A step at {@code point}, its server at {@code maxModelLen} run as {@code serverArgs}. */
    public static Builder builder(Point point, long maxModelLen, String serverArgs) {
        return new Builder(point, maxModelLen, serverArgs);
    }

    public Builder toBuilder() {
        return new Builder(point(), maxModelLen, serverArgs)
                .measured(metrics, verification, requests, warnings)
                .outcome(outcome, error, failure)
                .server(server, log)
                .roofline(roofline)
                .answer(answer, passkeyMs)
                .engineCount(engineCount);
    }

    /** This step with its pass-key answer and the time the check added. */
    public Scenario withAnswer(PasskeyAnswer a, Double ms) {
        return toBuilder().answer(a, ms).build();
    }

    /** This step as a frontier sees it. */
    public Frontier.Attempt attempt() {
        return new Frontier.Attempt(targetLen, outcome);
    }

    /** Assembles a step; {@code success} follows from the outcome. */
    public static final class Builder {
        private Point point;
        private final long maxModelLen;
        private final String serverArgs;
        private StepMetrics metrics;
        private String error;
        private Outcome outcome = Outcome.OK;
        private Failure failure;
        private Server server;
        private Verification verification;
        private String log;
        private List<Request> requests = List.of();
        private List<String> warnings = List.of();
        private Roofline roofline;
        private PasskeyAnswer answer;
        private Double passkeyMs;
        private EngineCount engineCount;

        private Builder(Point point, long maxModelLen, String serverArgs) {
            this.point = point;
            this.maxModelLen = maxModelLen;
            this.serverArgs = serverArgs;
        }

        /** The step as the answer for another target (a kept server's failure answers the target it was probed for). */
        public Builder target(long target) {
            this.point = point.at(target);
            return this;
        }

        /** What the step's requests showed; {@code m} is null when none succeeded. */
        public Builder measured(StepMetrics m, Verification v, List<Request> r, List<String> w) {
            this.metrics = m;
            this.verification = v;
            this.requests = r;
            this.warnings = w;
            return this;
        }

        /**
         * How the step ended: the seeds' one-sentence {@code error} (null on success) and, for a failure, what
         * proves it (null otherwise).
         */
        public Builder outcome(Outcome o, String errorSentence, Failure f) {
            this.outcome = o;
            this.error = errorSentence;
            this.failure = f;
            return this;
        }

        /** The step's server and its log, relative to the run folder (either may be null). */
        public Builder server(Server s, String logRelative) {
            this.server = s;
            this.log = logRelative;
            return this;
        }

        /** The step's prefill against its floor; null for none. */
        public Builder roofline(Roofline r) {
            this.roofline = r;
            return this;
        }

        /** The pass-key check's answer and the milliseconds it added (both null for a step not checked at all). */
        public Builder answer(PasskeyAnswer a, Double ms) {
            this.answer = a;
            this.passkeyMs = ms;
            return this;
        }

        /** What the engine's own count showed during a concurrency probe; null for none. */
        public Builder engineCount(EngineCount c) {
            this.engineCount = c;
            return this;
        }

        /** The step's warnings, replaced. */
        public Builder warnings(List<String> w) {
            this.warnings = w;
            return this;
        }

        public Scenario build() {
            return new Scenario(
                    point.backend(),
                    point.target(),
                    maxModelLen,
                    outcome.passed(),
                    serverArgs,
                    metrics,
                    error,
                    outcome,
                    failure,
                    server,
                    verification,
                    log,
                    requests,
                    warnings,
                    point.concurrency(),
                    point.params(),
                    roofline,
                    answer,
                    passkeyMs,
                    engineCount);
        }
    }

    /**
     * Why a step failed.
     *
     * @param phase preflight, startup, readiness, warmup, measure or shutdown
     * @param failureClass one failure class id
     * @param evidence the log lines or response body that prove it, at most about ten
     * @param verdictS for a verdict reached before the server ended or its time ran out (a fatal line, a stall, no
     *     progress), the seconds from the cause to the verdict; absent for every other failure
     */
    public record Failure(
            String phase,
            @JsonProperty("class") String failureClass,
            String detail,
            List<String> evidence,
            String log,
            Integer exitCode,
            @JsonInclude(JsonInclude.Include.NON_NULL) Double verdictS) {

        public Failure {
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
        }

        /** A failure judged when the server ended or a time ran out. */
        public Failure(
                String phase, String failureClass, String detail, List<String> evidence, String log, Integer exitCode) {
            this(phase, failureClass, detail, evidence, log, exitCode, null);
        }
    }

    /**
     * What is known of the step's server.
     *
     * @param id the launcher's name for the server (its process group, a cluster job), unique within a run
     * @param startupS from the start of the server (on a cluster: of its job) until it was ready or failed
     * @param queuedS time its cluster job waited in the queue before it ran, apart from startup; absent for a
     *     server that is not queued (a local process)
     * @param readyVia how readiness was seen, e.g. {@code GET /health 200}
     * @param pid the local process group id, null for a server that is not a local process
     * @param exitCode the main process's exit code as a shell reports it (128 + signal), null while unknown
     * @param ended how the server ended: exit code or signal and why
     * @param stoppedCleanly every process of the server left on TERM, without KILL
     * @param leftoverPids processes of the server still alive after the stop
     * @param kvCapacityTokens the KV capacity the engine logged
     * @param maxContextHint the largest length the engine named (refusal, capacity line, or its stated capacity)
     * @param hintKind what {@code maxContextHint} limits ({@code max_model_len} or {@code prompt_len}); null in
     *     files written before it was recorded, where the engine profile's kind applies
     * @param capacity what the running server stated about its limits after readiness, null when it stated nothing
     * @param memoryBeforeMib accelerator memory used per device before the launch, null without a query
     * @param memoryAfterMib the same after the stop: more than before means something still holds memory
     * @param outsideGroupPids processes of the server found outside its process group (a worker that called
     *     setpgid, a daemon that called setsid), stopped by pid; empty when there were none
     */
    public record Server(
            String id,
            Double startupS,
            @JsonInclude(JsonInclude.Include.NON_NULL) Double queuedS,
            String readyVia,
            Long pid,
            Integer exitCode,
            Ended ended,
            Boolean stoppedCleanly,
            List<Long> leftoverPids,
            Long kvCapacityTokens,
            Long maxContextHint,
            HintKind hintKind,
            ServedCapacity capacity,
            List<Long> memoryBeforeMib,
            List<Long> memoryAfterMib,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Long> outsideGroupPids) {

        public Server {
            leftoverPids = leftoverPids == null ? List.of() : List.copyOf(leftoverPids);
            outsideGroupPids = outsideGroupPids == null ? List.of() : List.copyOf(outsideGroupPids);
        }

        /** Only what a failure named: no server was seen. */
        public static Server ofHints(Long kvCapacityTokens, Long maxContextHint, HintKind hintKind) {
            return new Server(
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    List.of(),
                    kvCapacityTokens,
                    maxContextHint,
                    hintKind,
                    null,
                    null,
                    null,
                    List.of());
        }

        /** This server with {@code hint} as its hint, limiting {@code kind} (null: the profile's kind). */
        public Server withHint(Long hint, HintKind kind) {
            return withLimits(hint, kind, capacity);
        }

        /** This server with what it stated about its limits. */
        public Server withCapacity(ServedCapacity stated) {
            return withLimits(maxContextHint, hintKind, stated);
        }

        private Server withLimits(Long hint, HintKind kind, ServedCapacity stated) {
            return with(
                    hint,
                    kind,
                    stated,
                    exitCode,
                    ended,
                    stoppedCleanly,
                    leftoverPids,
                    memoryAfterMib,
                    outsideGroupPids);
        }

        /** What the stop of the server showed, with the processes it found outside the server's group. */
        public Server withStop(
                Ended how, boolean clean, List<Long> leftovers, List<Long> memoryAfter, List<Long> outside) {
            Integer code = how == null ? null : how.shellCode();
            return with(maxContextHint, hintKind, capacity, code, how, clean, leftovers, memoryAfter, outside);
        }

        // What is learnt after the launch; the rest (how it was started and became ready) stays.
        private Server with(
                Long hint,
                HintKind kind,
                ServedCapacity stated,
                Integer code,
                Ended how,
                Boolean clean,
                List<Long> leftovers,
                List<Long> memoryAfter,
                List<Long> outside) {
            return new Server(
                    id,
                    startupS,
                    queuedS,
                    readyVia,
                    pid,
                    code,
                    how,
                    clean,
                    leftovers,
                    kvCapacityTokens,
                    hint,
                    kind,
                    stated,
                    memoryBeforeMib,
                    memoryAfter,
                    outside);
        }
    }

    /** What the server reported about the measured prompts. */
    public record Verification(long targetLen, Long promptTokens, Long completionTokens, boolean exact) {}

    /**
     * One request, as timed by the client.
     *
     * @param sendMs time to upload the request body, reported apart from TTFT
     * @param result {@code ok} or what went wrong in the client's words
     * @param cachedTokens prompt tokens the server said it took from its cache; null when it did not say
     */
    public record Request(
            int index,
            boolean warmup,
            String result,
            int status,
            Double ttftMs,
            Double e2eMs,
            Double sendMs,
            Long promptTokens,
            Long completionTokens,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long cachedTokens) {

        /** A request whose server reported no cached tokens. */
        public Request(
                int index,
                boolean warmup,
                String result,
                int status,
                Double ttftMs,
                Double e2eMs,
                Double sendMs,
                Long promptTokens,
                Long completionTokens) {
            this(index, warmup, result, status, ttftMs, e2eMs, sendMs, promptTokens, completionTokens, null);
        }
    }
}
