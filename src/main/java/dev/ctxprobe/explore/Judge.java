package dev.ctxprobe.explore;

import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.engine.Diagnosis;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Limit;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.ServedCapacity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The judgement of a step: what it observed (the engine's profile, the requests' records, the server's log, how the
 * server ended) turned into at most one failure class with its detail and evidence. Pure: it launches, reads and
 * waits for nothing, so every rule is tested on recorded texts.
 */
final class Judge {
    private Judge() {}

    /**
     * What a step's requests and server showed.
     *
     * @param lenient {@code load.verify: lenient}: a server-reported length other than the target is accepted
     * @param log the server's log lines (head and tail of a large log), empty for an endpoint ctxprobe did not start
     * @param serverEnded how the server ended while serving, or null when it was still running
     * @param capacity what the server stated about its limits after readiness
     * @param maxModelLen the length the server was configured for (target + pad)
     */
    record Observation(
            EngineProfile profile,
            long target,
            boolean lenient,
            Duration requestTimeout,
            List<RequestRecord> warmup,
            List<RequestRecord> measured,
            List<String> log,
            Termination serverEnded,
            ServedCapacity capacity,
            long maxModelLen) {}

    /**
     * Why a server that was launched did not become ready. What a cluster says of its job comes first: an engine
     * killed for its memory or ended by the cluster has no say in its own log.
     */
    static StepFailure startup(EngineProfile profile, Readiness notReady, List<String> log) {
        return startup(profile, notReady, log, null);
    }

    /**
     * As {@link #startup(EngineProfile, Readiness, List)}, for a server probed at {@code probed} ({@code host:port}):
     * one whose log says it serves while nothing answered there listens elsewhere, not still loading.
     */
    static StepFailure startup(EngineProfile profile, Readiness notReady, List<String> log, String probed) {
        if (probed != null
                && notReady instanceof Readiness.TimedOut t
                && t.lastAnswer().equals("connection refused")) {
            Optional<String> said = log.stream()
                    .filter(l -> profile.readyLines().stream().anyMatch(l::contains))
                    .findFirst();
            if (said.isPresent()) {
                return StepFailure.of(
                        FailureClass.STARTUP_TIMEOUT,
                        Phase.READINESS,
                        "the log says the server is up, but nothing answered on " + probed + " in "
                                + seconds(t.after()) + " s: it listens on another address or port (IPv6 only, another"
                                + " interface); set the backend's host and port to where it listens, e.g. host: \"::1\"",
                        List.of(said.get().strip(), "every probe of " + probed + ": connection refused"));
            }
        }
        if (notReady instanceof Readiness.Queued q) {
            return queued(q);
        }
        if (notReady instanceof Readiness.Refused r) {
            return StepFailure.of(
                            r.refusal().failureClass(),
                            Phase.STARTUP,
                            r.refusal().detail(),
                            r.refusal().evidence())
                    .withVerdict(r.afterCause());
        }
        Termination how = notReady instanceof Readiness.Exited x ? x.how() : null;
        Integer code = how == null ? null : how.shellCode();
        if (how != null && how.reason() == Ended.Reason.OUT_OF_MEMORY) {
            return StepFailure.of(
                            FailureClass.OOM_STARTUP,
                            Phase.STARTUP,
                            "the server was killed for exceeding its memory limit while it started; give it more"
                                    + " memory (launcher.mem) or lower the context",
                            endEvidence(how, log))
                    .withExitCode(code);
        }
        if (how != null && endedByCluster(how)) {
            return clusterEnded(how, Phase.STARTUP, log).withExitCode(code);
        }
        Diagnosis d = profile.diagnoseStartup(code, log).orElseGet(() -> fallbackStartup(how, notReady, log));
        if (how != null && how.detail() != null && d.detail().contains(EngineProfile.SIGKILL_CAUSES)) {
            // The launcher read the kernel's OOM count: the SIGKILL came from outside, not from the OOM killer.
            d = new Diagnosis(
                    d.failureClass(),
                    d.detail().replace(EngineProfile.SIGKILL_CAUSES, how.detail()),
                    d.evidence(),
                    d.named());
        }
        Phase phase = how == null ? Phase.READINESS : Phase.STARTUP;
        return StepFailure.of(d, phase, code);
    }

    /**
     * A verdict the startup watch reached while the server still ran: a fatal line and no readiness within the grace
     * (the class a startup rule in the log names, else {@code startup_crash}), or a stall ({@code startup_timeout}).
     */
    static StepFailure verdict(EngineProfile profile, StartupWatch.Verdict v, List<String> log) {
        if (v.fatal()) {
            Diagnosis d = profile.diagnoseFatal(v.line(), log);
            List<String> evidence = new ArrayList<>(d.evidence());
            if (evidence.stream()
                    .noneMatch(l -> l.contains(v.line()) || v.line().contains(l.strip()))) {
                evidence.add(v.line());
            }
            return StepFailure.of(
                            new Diagnosis(
                                    d.failureClass(),
                                    d.detail() + "; it was still running and not ready " + tenths(v.afterCause())
                                            + " s after its fatal line (timeouts.fatal_grace_s), so it was stopped",
                                    evidence,
                                    d.named()),
                            Phase.STARTUP,
                            null)
                    .withVerdict(v.afterCause());
        }
        String last = v.line() == null ? "the log is empty" : "its last line: " + v.line();
        return StepFailure.of(
                        FailureClass.STARTUP_TIMEOUT,
                        Phase.STARTUP,
                        "the server stalled while starting: its log was silent for " + tenths(v.silent())
                                + " s while its processes used no CPU for " + tenths(v.afterCause())
                                + " s (timeouts.stall_s), so it was stopped (" + last + ")",
                        tail(log, 8))
                .withVerdict(v.afterCause());
    }

    private static StepFailure queued(Readiness.Queued q) {
        String reason = q.reason() == null || q.reason().isBlank() ? "None" : q.reason();
        return StepFailure.of(
                FailureClass.QUEUE_TIMEOUT,
                Phase.STARTUP,
                "the cluster had not started the job after " + seconds(q.after()) + " s in the queue (" + q.state()
                        + ", reason " + reason + "); " + queueAdvice(reason),
                List.of("job state " + q.state() + ", reason " + reason + ", queued " + seconds(q.after()) + " s"));
    }

    // The reasons Slurm gives most (squeue's man page, "JOB REASON CODES"), each with what a user can change.
    private static String queueAdvice(String reason) {
        if (reason.startsWith("Partition")) {
            return "the partition cannot run it now: choose another launcher.partition or ask its administrator";
        }
        if (reason.startsWith("QOS") || reason.startsWith("Assoc") || reason.contains("Limit")) {
            return "a limit of the account or QOS holds it: see 'scontrol show job' and lower the request or"
                    + " change launcher.qos or launcher.account";
        }
        if (reason.startsWith("ReqNodeNotAvail") || reason.startsWith("Nodes") || reason.startsWith("BadConstraints")) {
            return "the nodes it asks for are not available: check launcher.constraint, gres and nodes";
        }
        return "the cluster is busy (Resources, Priority): raise timeouts.queue_s or ask for less";
    }

    /** A job the cluster ended for its own reasons, or someone other than ctxprobe cancelled. */
    private static boolean endedByCluster(Termination how) {
        return switch (how.reason()) {
            case TIME_LIMIT, NODE_FAILURE, PREEMPTED, CANCELLED -> true;
            case EXITED, STOPPED, OUT_OF_MEMORY, UNKNOWN -> false;
        };
    }

    private static StepFailure clusterEnded(Termination how, Phase phase, List<String> log) {
        String advice = switch (how.reason()) {
            case TIME_LIMIT -> "it reached its time limit; raise launcher.time";
            case NODE_FAILURE -> "its node failed; run again, or exclude the node with launcher.extra_args";
            case PREEMPTED -> "another job took its resources; run again, or choose a partition without preemption";
            default -> "someone other than ctxprobe cancelled it; run again with --resume";
        };
        return StepFailure.of(
                FailureClass.CLUSTER_ENDED,
                phase,
                "the cluster ended the job: " + advice + " (this says nothing about length)",
                endEvidence(how, log));
    }

    // What a cluster said of how it ended the server, then the server's last log lines.
    private static List<String> endEvidence(Termination how, List<String> log) {
        List<String> evidence = new ArrayList<>();
        evidence.add(how.describe());
        evidence.addAll(tail(log, 8));
        return evidence;
    }

    private static Diagnosis fallbackStartup(Termination how, Readiness notReady, List<String> log) {
        List<String> tail = tail(log, 8);
        if (how == null) {
            return new Diagnosis(
                    FailureClass.STARTUP_TIMEOUT,
                    "not ready after " + seconds(notReady.after()) + " s (last answer: "
                            + ((Readiness.TimedOut) notReady).lastAnswer()
                            + "); raise timeouts.startup_s if loading is slow",
                    tail);
        }
        return new Diagnosis(
                FailureClass.STARTUP_CRASH,
                "the server ended with " + how.describe() + " during startup; see the log's last lines",
                tail);
    }

    /**
     * True when a failed request may mean the server died (vLLM answers 500 and SGLang sends an error event as
     * their engine dies; a broken stream may be a crash): the caller waits briefly for an exit before judging. A
     * refusal that names the length is the engine's answer and needs no wait.
     */
    static boolean mayMeanCrash(EngineProfile profile, RequestRecord r) {
        return switch (r.outcome()) {
            case OK, TIMEOUT, TOO_LARGE -> false;
            case HTTP_STATUS, ERROR_EVENT ->
                profile.diagnoseResponse(r.httpStatus(), r.errorText()).failureClass() != FailureClass.REQUEST_REJECTED
                        && (r.httpStatus() >= 500 || r.outcome() == RequestOutcome.ERROR_EVENT);
            case NO_CHOICES, CONNECTION_FAILED, PROTOCOL_ERROR -> true;
        };
    }

    /** The first failure among the warm-ups, else among the measured requests; empty when the step passed. */
    static Optional<StepFailure> requests(Observation o) {
        StepFailure f = first(o.warmup(), Phase.WARMUP, o);
        return Optional.ofNullable(f != null ? f : first(o.measured(), Phase.MEASURE, o));
    }

    private static StepFailure first(List<RequestRecord> records, Phase phase, Observation o) {
        for (RequestRecord r : records) {
            if (!r.ok()) {
                return request(r, phase, o);
            }
            StepFailure length = length(r, phase, o);
            if (length != null) {
                return length;
            }
        }
        return null;
    }

    private static StepFailure length(RequestRecord r, Phase phase, Observation o) {
        if (o.profile().emptyAnswerMeansTooLong() && r.completionTokens() != null && r.completionTokens() == 0) {
            return StepFailure.of(
                    FailureClass.TRUNCATED,
                    phase,
                    "the server answered 200 with an empty text and no completion tokens, which "
                            + o.profile().name() + " does when the prompt exceeds its session length",
                    List.of("usage: prompt_tokens=" + r.promptTokens() + " completion_tokens=0"));
        }
        if (o.lenient()) {
            return null;
        }
        if (r.promptTokens() != null
                && r.promptTokens() < o.target()
                && o.profile().truncationAdvice() != null) {
            List<String> evidence = new ArrayList<>();
            evidence.add("usage: prompt_tokens=" + r.promptTokens() + " target=" + o.target());
            evidence.addAll(o.profile().truncationEvidence(o.log()));
            return StepFailure.of(
                    FailureClass.TRUNCATED,
                    phase,
                    String.format(
                            Locale.ROOT,
                            "the server counted %,d prompt tokens for %,d sent: %s",
                            r.promptTokens(),
                            o.target(),
                            o.profile().truncationAdvice()),
                    evidence);
        }
        if (r.promptTokens() == null && r.promptTokensWritten() != null) {
            return StepFailure.of(
                    FailureClass.TOKEN_MISMATCH,
                    phase,
                    "the server reported usage.prompt_tokens as " + r.promptTokensWritten() + ", not a whole number"
                            + " of tokens, so the length cannot be verified; set load.verify: lenient to accept"
                            + " unverified lengths",
                    List.of("request " + r.index() + ": usage.prompt_tokens=" + r.promptTokensWritten()));
        }
        if (r.promptTokens() == null) {
            return StepFailure.of(
                    FailureClass.TOKEN_MISMATCH,
                    phase,
                    "the server reported no usage.prompt_tokens, so the length cannot be verified;"
                            + " set load.verify: lenient to accept unverified lengths",
                    List.of("request " + r.index() + ": no usage in the answer"));
        }
        if (r.promptTokens().longValue() == o.target()) {
            return null;
        }
        boolean fewer = r.promptTokens() < o.target();
        return StepFailure.of(
                fewer ? FailureClass.TRUNCATED : FailureClass.TOKEN_MISMATCH,
                phase,
                String.format(
                        Locale.ROOT,
                        "the server counted %,d prompt tokens for %,d sent%s",
                        r.promptTokens(),
                        o.target(),
                        fewer
                                ? ": it truncated the prompt (context shift on?)"
                                : ": it added tokens (a BOS?); set load.verify: lenient if that is expected"),
                List.of("usage: prompt_tokens=" + r.promptTokens() + " target=" + o.target()));
    }

    /**
     * What had come back when a request was given up: a streaming server sends its status and headers at once and
     * the body only with the first token, so "0 bytes" beside a 200 would read as a contradiction.
     */
    static String received(RequestRecord r) {
        int status = r.httpStatus();
        if (status == 0) {
            return "nothing came back, not even a status line";
        }
        if (r.bytesReceived() == 0) {
            return "the server answered " + status + " with its headers, then sent no byte of the body";
        }
        return String.format(
                Locale.ROOT, "the server answered %d, then %,d bytes of the body", status, r.bytesReceived());
    }

    private static StepFailure request(RequestRecord r, Phase phase, Observation o) {
        if (o.serverEnded() != null && mayMeanCrash(o.profile(), r)) {
            return crashed(r, phase, o);
        }
        return switch (r.outcome()) {
            case TIMEOUT ->
                o.capacity().near(o.target())
                        ? hangAtCapacity(r, phase, o)
                        : StepFailure.of(
                                FailureClass.TIMEOUT,
                                phase,
                                "no complete answer within " + seconds(o.requestTimeout()) + " s (" + received(r)
                                        + "); the server hangs or the prefill is slower than timeouts.request_s",
                                List.of(String.valueOf(r.errorText())));
            case HTTP_STATUS, ERROR_EVENT -> {
                Diagnosis d = o.profile().diagnoseResponse(r.httpStatus(), r.errorText());
                StepFailure f = StepFailure.of(d, phase, null);
                yield d.failureClass() == FailureClass.REQUEST_REJECTED ? refused(f, o) : f;
            }
            case TOO_LARGE ->
                StepFailure.of(
                        FailureClass.HTTP_ERROR,
                        phase,
                        r.errorText() + "; the request was abandoned there (a stream without end?), raise the"
                                + " limit in 'limits' if the answer is really that long",
                        List.of(r.errorText(), r.bytesReceived() + " bytes received"));
            default ->
                StepFailure.of(
                        FailureClass.HTTP_ERROR,
                        phase,
                        "the answer was not a valid completion stream ("
                                + r.outcome().name().toLowerCase(Locale.ROOT) + ": " + r.errorText() + ")",
                        List.of(String.valueOf(r.errorText())));
        };
    }

    /**
     * A live server that held the step's requests and showed no progress for {@code timeouts.progress_s}: at the
     * capacity it stated, today's scheduling hang, judged without waiting for {@code request_s}.
     */
    static StepFailure noProgress(ProgressWatch.Verdict v, Phase phase, long target, ServedCapacity capacity) {
        String seen = "the server held the request and its " + v.path() + " showed no progress for "
                + tenths(v.afterCause()) + " s while it was alive (timeouts.progress_s), so it was stopped";
        String detail = capacity.near(target)
                ? "no progress at the stated capacity (a known vLLM scheduling hang): the prompt of "
                        + String.format(Locale.ROOT, "%,d", target) + " tokens lies within "
                        + Math.round(ServedCapacity.NEAR * 100) + "% of what the server states (" + stated(capacity)
                        + "); " + seen + "; the search checks one step below"
                : "no progress: " + seen + "; the server hangs";
        return StepFailure.of(FailureClass.TIMEOUT, phase, detail, List.of("GET " + v.path() + ": " + v.shown()))
                .withVerdict(v.afterCause());
    }

    /** A request that got nothing at the capacity the server stated: vLLM admits it and never schedules it. */
    private static StepFailure hangAtCapacity(RequestRecord r, Phase phase, Observation o) {
        return StepFailure.of(
                FailureClass.TIMEOUT,
                phase,
                "no output at the stated capacity (a known vLLM scheduling hang): the prompt of "
                        + String.format(Locale.ROOT, "%,d", o.target()) + " tokens lies within "
                        + Math.round(ServedCapacity.NEAR * 100) + "% of what the server states ("
                        + stated(o.capacity()) + ") and got nothing within " + seconds(o.requestTimeout())
                        + " s; the search checks one step below",
                List.of(String.valueOf(r.errorText())));
    }

    /**
     * A refusal with what the server stated: why its limit is below the configured length (its slots, its training
     * context, its fit to memory), and the stated limit as the hint where the refusal named no number (llama.cpp
     * of early 2025).
     */
    private static StepFailure refused(StepFailure f, Observation o) {
        StepFailure out = f;
        Optional<String> why = o.profile().explainLimit(o.capacity(), o.maxModelLen());
        if (why.isPresent()) {
            out = out.withDetail("; " + why.get());
        }
        if (out.named().limit() == null) {
            Optional<Limit> stated = o.profile().capacityHint(o.capacity(), o.maxModelLen(), true);
            if (stated.isPresent()) {
                out = out.withLimit(stated.get());
            }
        }
        return out;
    }

    /** The numbers a server stated, for a message: {@code 8,191 prompt tokens, KV 8,192 tokens}. */
    static String stated(ServedCapacity c) {
        List<String> parts = new ArrayList<>();
        if (c.maxPromptTokens() != null) {
            parts.add(String.format(Locale.ROOT, "%,d prompt tokens", c.maxPromptTokens()));
        }
        if (c.kvTokens() != null) {
            parts.add(String.format(Locale.ROOT, "KV %,d tokens", c.kvTokens()));
        }
        return String.join(", ", parts) + (c.sources().isEmpty() ? "" : " from " + String.join(", ", c.sources()));
    }

    private static StepFailure crashed(RequestRecord r, Phase phase, Observation o) {
        Termination how = o.serverEnded();
        if (endedByCluster(how)) {
            return clusterEnded(how, phase, o.log()).withExitCode(how.shellCode());
        }
        List<String> evidence = new ArrayList<>();
        evidence.add("client: " + r.errorText());
        evidence.addAll(tail(o.log(), 8));
        Integer code = how.shellCode();
        return StepFailure.of(
                        FailureClass.SERVER_CRASH,
                        phase,
                        "the server died while serving (" + how.describe() + ")"
                                + (code != null && code == 137 && how.reason() == Ended.Reason.EXITED
                                        ? ", killed: out of memory?"
                                        : ""),
                        evidence)
                .withExitCode(code);
    }

    static List<String> tail(List<String> lines, int n) {
        List<String> meaningful = lines.stream().filter(l -> !l.isBlank()).toList();
        return meaningful.subList(Math.max(0, meaningful.size() - n), meaningful.size());
    }

    private static String tenths(Duration d) {
        return String.format(Locale.ROOT, "%.1f", seconds(d));
    }

    static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
