package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.ctxprobe.metrics.StepMetrics;
import java.util.List;

/**
 * One step as written in {@code scenarios}: the seeds' keys first ({@code backend} to {@code error}), then
 * ctxprobe's additions.
 *
 * @param success true when the step's measured requests all succeeded with the exact length
 * @param serverArgs the server command, words joined by spaces
 * @param metrics null when no request succeeded
 * @param error one sentence a user can act on, null on success
 * @param outcome {@code ok}, {@code skipped}, or a failure class id
 * @param log the step's server log, relative to the run folder
 * @param requests the individual requests, warm-ups included
 */
public record Scenario(
        String backend,
        long targetLen,
        long maxModelLen,
        boolean success,
        String serverArgs,
        StepMetrics metrics,
        String error,
        String outcome,
        Failure failure,
        Server server,
        Verification verification,
        String log,
        List<Request> requests) {

    /** This step as the answer for another target (a kept server's failure answers the target it was launched for). */
    public Scenario withTarget(long target) {
        return new Scenario(
                backend,
                target,
                maxModelLen,
                success,
                serverArgs,
                metrics,
                error,
                outcome,
                failure,
                server,
                verification,
                log,
                requests);
    }

    /**
     * Why a step failed.
     *
     * @param phase preflight, startup, readiness, warmup, measure or shutdown
     * @param failureClass one failure class id of spec 05
     * @param evidence the log lines or response body that prove it, at most about ten
     */
    public record Failure(
            String phase,
            @JsonProperty("class") String failureClass,
            String detail,
            List<String> evidence,
            String log,
            Integer exitCode) {}

    /**
     * What is known of the step's server.
     *
     * @param readyVia how readiness was seen, e.g. {@code GET /health 200}
     * @param stoppedCleanly the whole process group left on TERM, without KILL
     * @param leftoverPids processes of the group still alive after the stop
     * @param kvCapacityTokens the KV capacity the engine logged
     * @param maxContextHint the largest length the engine named (refusal or capacity line)
     * @param memoryBeforeMib accelerator memory used per device before the launch, null without a query
     * @param memoryAfterMib the same after the stop: more than before means something still holds memory
     */
    public record Server(
            Double startupS,
            String readyVia,
            Long pid,
            Integer exitCode,
            Boolean stoppedCleanly,
            List<Long> leftoverPids,
            Long kvCapacityTokens,
            Long maxContextHint,
            List<Long> memoryBeforeMib,
            List<Long> memoryAfterMib) {

        /** Only what a failure named: no server was seen. */
        public static Server ofHints(Long kvCapacityTokens, Long maxContextHint) {
            return new Server(null, null, null, null, null, List.of(), kvCapacityTokens, maxContextHint, null, null);
        }

        public Server withHint(Long hint) {
            return new Server(
                    startupS,
                    readyVia,
                    pid,
                    exitCode,
                    stoppedCleanly,
                    leftoverPids,
                    kvCapacityTokens,
                    hint,
                    memoryBeforeMib,
                    memoryAfterMib);
        }

        /** What the stop of the server showed. */
        public Server withStop(Integer exit, boolean clean, List<Long> leftovers, List<Long> memoryAfter) {
            return new Server(
                    startupS,
                    readyVia,
                    pid,
                    exit,
                    clean,
                    leftovers,
                    kvCapacityTokens,
                    maxContextHint,
                    memoryBeforeMib,
                    memoryAfter);
        }
    }

    /** What the server reported about the measured prompts. */
    public record Verification(long targetLen, Long promptTokens, Long completionTokens, boolean exact) {}

    /**
     * One request, as timed by the client.
     *
     * @param sendMs time to upload the request body, reported apart from TTFT
     * @param result {@code ok} or what went wrong in the client's words
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
            Long completionTokens) {}
}
