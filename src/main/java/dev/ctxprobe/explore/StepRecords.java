package dev.ctxprobe.explore;

import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.engine.Capacity;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Refusal;
import dev.ctxprobe.launch.ServerHandle;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The records of a step: what a step observed, in the result model's terms. Every scenario the exploration writes
 * is built here, so the runtime values (a launcher's handle, the client's request records, a judged failure) meet
 * the persisted model in one place.
 */
final class StepRecords {

    private static final String INTERRUPTED = "the run was interrupted; --resume runs this step again";

    private StepRecords() {}

    /** A step at {@code point} run with {@code cmd}, its outcome still to be set. */
    static Scenario.Builder base(Point point, ServerCommand cmd) {
        return Scenario.builder(point, cmd.maxModelLen(), cmd.serverArgs());
    }

    /** A failed step with what proves it, on the server (or, where none was seen, the hints the failure named). */
    static Scenario.Builder failed(
            Point point, ServerCommand cmd, String logRelative, Scenario.Server server, StepFailure f) {
        Scenario.Failure failure = new Scenario.Failure(
                f.phase().id(),
                f.failureClass().id(),
                f.detail(),
                f.evidence(),
                logRelative,
                f.exitCode(),
                f.verdictS());
        Scenario.Server s = server;
        Capacity named = f.named();
        if (s == null && (named.limit() != null || named.kvCapacityTokens() != null)) {
            s = Scenario.Server.ofHints(named.kvCapacityTokens(), named.maxContextHint(), named.hintKind());
        }
        return base(point, cmd)
                .outcome(Outcome.failed(f.failureClass()), f.sentence(), failure)
                .server(s, logRelative);
    }

    /** A step interrupted by the user, in the phase it was in. */
    static Scenario.Builder interrupted(
            Point point, ServerCommand cmd, String logRelative, Scenario.Server server, Phase phase) {
        return failed(
                point,
                cmd,
                logRelative,
                server,
                StepFailure.of(FailureClass.INTERRUPTED, phase, INTERRUPTED, List.of()));
    }

    /** A step that failed because ctxprobe itself did: never hidden behind another class. */
    static Scenario clientError(
            Point point, ServerCommand cmd, String logRelative, Scenario.Server server, Phase phase, Throwable e) {
        StepFailure f = StepFailure.of(
                FailureClass.CLIENT_ERROR,
                phase,
                "ctxprobe itself failed (" + cause(e)
                        + "); this is a bug in ctxprobe, please report it with the evidence and the log",
                stackHead(e));
        return failed(point, cmd, logRelative, server, f).build();
    }

    /**
     * A step that was never launched: its series stopped before it.
     *
     * @param because the step whose failure stopped the series
     */
    static Scenario skipped(Point point, ServerCommand cmd, Scenario because) {
        String why = because.outcome().endsSearch()
                ? "skipped: the step at " + because.targetLen() + " failed with "
                        + because.outcome().id() + ", which says nothing about length, so this backend stopped"
                : "skipped: the step at " + because.targetLen() + " failed and sweep.stop_after_failure is true";
        return base(point, cmd).outcome(Outcome.SKIPPED, why, null).build();
    }

    /** A step whose server the launcher refused (preflight) or could not start. */
    static Scenario refused(Point point, ServerCommand cmd, Phase phase, Refusal r) {
        StepFailure f = StepFailure.of(r.failureClass(), phase, r.detail(), r.evidence());
        return failed(point, cmd, null, null, f).build();
    }

    /** A finished step with what its server's stop showed. */
    static Scenario stopped(Scenario s, StopReport stop) {
        if (stop.nothingStopped()) {
            return s;
        }
        Scenario.Server old = s.server() != null ? s.server() : Scenario.Server.ofHints(null, null, null);
        Scenario.Server server = old.withStop(
                stop.ended() == null ? null : stop.ended().recorded(),
                stop.stoppedCleanly(),
                stop.leftoverPids(),
                stop.memoryAfterMib(),
                stop.outsideGroupPids());
        return s.toBuilder().server(server, s.log()).build();
    }

    /** What is known of a launched server: how it started and became ready (or not), what its log named. */
    static Scenario.Server server(ServerHandle h, Readiness ready, Capacity capacity) {
        // Time in a cluster's queue is not startup: a queue timeout's wait is queued_s, and its startup never began.
        Duration queued = h.queued();
        return new Scenario.Server(
                h.id(),
                ready == null || ready instanceof Readiness.Queued || ready instanceof Readiness.Refused
                        ? null
                        : Judge.seconds(ready.after()),
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

    /** What the server reported about the measured prompts. */
    static Scenario.Verification verification(List<RequestRecord> measured, long target) {
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

    /** One request as the client timed it. */
    static Scenario.Request request(RequestRecord r) {
        return new Scenario.Request(
                r.index(),
                r.warmup(),
                r.ok() ? "ok" : r.outcome().name().toLowerCase(Locale.ROOT),
                r.httpStatus(),
                r.ok() ? r.ttftMs() : null,
                r.ok() ? r.e2eMs() : null,
                r.sendMs(),
                r.promptTokens() == null ? null : r.promptTokens().longValue(),
                r.completionTokens() == null ? null : r.completionTokens().longValue(),
                r.cachedTokens() == null ? null : r.cachedTokens().longValue());
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
}
