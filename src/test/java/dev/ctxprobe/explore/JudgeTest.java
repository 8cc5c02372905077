package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.launch.Readiness;
import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.ServedCapacity;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The judgement of a step as a pure function, class by class, on engines' real texts: what the step observed goes
 * in, one failure (or none) comes out, with nothing launched.
 */
class JudgeTest {
    private static final long TARGET = 8192;

    private static RequestRecord ok(Integer promptTokens, Integer completionTokens) {
        return record(200, RequestOutcome.OK, promptTokens, completionTokens, null);
    }

    private static RequestRecord record(
            int status, RequestOutcome outcome, Integer promptTokens, Integer completionTokens, String error) {
        long t = 1_000_000_000L;
        boolean answered = outcome == RequestOutcome.OK;
        return new RequestRecord(
                0,
                false,
                TARGET,
                status,
                outcome,
                promptTokens,
                completionTokens,
                answered ? "length" : null,
                answered ? 1 : 0,
                answered,
                t,
                t,
                answered ? t + 5_000_000 : null,
                answered ? t + 5_000_000 : null,
                t + 6_000_000,
                0.1,
                answered ? 5.0 : null,
                answered ? 5.0 : null,
                null,
                List.of(),
                error,
                answered ? 200 : 0,
                null,
                "");
    }

    private static Optional<StepFailure> judge(String engine, RequestRecord r, Termination ended) {
        return Judge.requests(new Judge.Observation(
                Engines.profile(engine),
                TARGET,
                false,
                Duration.ofSeconds(30),
                List.of(),
                List.of(r),
                List.of("INFO:     Started server process [123]", "RuntimeError: CUDA error: an illegal memory access"),
                ended,
                ServedCapacity.NONE,
                0));
    }

    @Test
    void anExactAnswerPasses() {
        assertThat(judge("vllm", ok((int) TARGET, 1), null)).isEmpty();
    }

    @Test
    void startupRefusalsAreClassifiedFromTheLogAndTheExit() {
        List<String> vllm = List.of(
                "(EngineCore_DP0 pid=123) ValueError: To serve at least one request with the model's max seq len"
                        + " (30000), (6.66 GiB KV cache is needed, which is larger than the available KV cache memory"
                        + " (5.44 GiB). Based on the available memory, the estimated maximum model length is 13528.");
        StepFailure kv = Judge.startup(
                Engines.profile("vllm"), new Readiness.Exited(Duration.ofSeconds(40), Termination.exited(1)), vllm);
        assertThat(kv.failureClass()).isEqualTo(FailureClass.KV_INSUFFICIENT);
        assertThat(kv.phase()).isEqualTo(Phase.STARTUP);
        assertThat(kv.named().maxContextHint()).isEqualTo(13528L);
        assertThat(kv.exitCode()).isEqualTo(1);

        StepFailure oom = Judge.startup(
                Engines.profile("sglang"),
                new Readiness.Exited(Duration.ofSeconds(9), Termination.exited(1)),
                List.of("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."));
        assertThat(oom.failureClass()).isEqualTo(FailureClass.OOM_STARTUP);

        StepFailure flag = Judge.startup(
                Engines.profile("vllm"),
                new Readiness.Exited(Duration.ofSeconds(2), Termination.exited(2)),
                List.of("vllm serve: error: argument --max-num-seqs: invalid int value: 'many'"));
        assertThat(flag.failureClass()).isEqualTo(FailureClass.CONFIG_REJECTED);

        StepFailure crash = Judge.startup(
                Engines.profile("vllm"),
                new Readiness.Exited(Duration.ofSeconds(2), Termination.exited(139)),
                List.of("Segmentation fault (core dumped)"));
        assertThat(crash.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(crash.exitCode()).isEqualTo(139);

        StepFailure slow = Judge.startup(
                Engines.profile("sglang"),
                new Readiness.TimedOut(Duration.ofSeconds(1800), "HTTP 503"),
                List.of("Load weight begin."));
        assertThat(slow.failureClass()).isEqualTo(FailureClass.STARTUP_TIMEOUT);
        assertThat(slow.phase()).isEqualTo(Phase.READINESS);
        assertThat(slow.exitCode()).isNull();
    }

    @Test
    void aServerThatSaysItIsUpWhereNothingAnswersListensElsewhere() {
        List<String> log = List.of("INFO:     Started server process", "INFO:     Application startup complete.");
        StepFailure elsewhere = Judge.startup(
                Engines.profile("vllm"),
                new Readiness.TimedOut(Duration.ofSeconds(20), "connection refused"),
                log,
                "127.0.0.1:8000");
        assertThat(elsewhere.failureClass()).isEqualTo(FailureClass.STARTUP_TIMEOUT);
        assertThat(elsewhere.detail())
                .contains("the log says the server is up, but nothing answered on 127.0.0.1:8000")
                .doesNotContain("still loading");
        StepFailure loading = Judge.startup(
                Engines.profile("vllm"),
                new Readiness.TimedOut(Duration.ofSeconds(20), "connection refused"),
                List.of("INFO:     Started server process"),
                "127.0.0.1:8000");
        assertThat(loading.detail()).doesNotContain("nothing answered on");
    }

    @Test
    void aRefusalInsideA200StreamIsRequestRejectedWithTheLimit() {
        RequestRecord sglang = record(
                200,
                RequestOutcome.ERROR_EVENT,
                null,
                null,
                "{\"error\": {\"message\": \"Input length (8192 tokens) exceeds the maximum allowed length (8000"
                        + " tokens). Use a shorter input or enable --allow-auto-truncate.\"}}");

        StepFailure f = judge("sglang", sglang, null).orElseThrow();

        assertThat(f.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(f.named().maxContextHint()).isEqualTo(8000L);
    }

    @Test
    void llamaCppsFourHundredNamesItsContext() {
        RequestRecord llama = record(
                400,
                RequestOutcome.HTTP_STATUS,
                null,
                null,
                "{\"error\":{\"code\":400,\"message\":\"request (9000 tokens) exceeds the available context size (8192"
                        + " tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":9000,"
                        + "\"n_ctx\":8192}}");

        StepFailure f = judge("llamacpp", llama, null).orElseThrow();

        assertThat(f.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(f.named().maxContextHint()).isEqualTo(8192L);
    }

    @Test
    void fewerPromptTokensIsTruncationAndMoreIsAMismatch() {
        assertThat(judge("llamacpp", ok(4096, 1), null).orElseThrow().failureClass())
                .isEqualTo(FailureClass.TRUNCATED);
        assertThat(judge("vllm", ok((int) TARGET + 1, 1), null).orElseThrow().failureClass())
                .isEqualTo(FailureClass.TOKEN_MISMATCH);
        assertThat(judge("vllm", ok(null, 1), null).orElseThrow().failureClass())
                .isEqualTo(FailureClass.TOKEN_MISMATCH);
    }

    @Test
    void aPromptCountWrittenAsTextIsSaidAsSuchNotAsNone() {
        RequestRecord none = ok(null, 1);
        assertThat(judge("vllm", none, null).orElseThrow().detail()).contains("reported no usage.prompt_tokens");
        for (String written : List.of("\"1024\"", "1e400")) {
            RequestRecord r = new RequestRecord(
                    none.index(),
                    none.warmup(),
                    none.targetLen(),
                    none.httpStatus(),
                    none.outcome(),
                    null,
                    none.completionTokens(),
                    none.finishReason(),
                    none.choiceEvents(),
                    none.sawDone(),
                    none.tStartNanos(),
                    none.tSendNanos(),
                    none.tFirstNanos(),
                    none.tLastNanos(),
                    none.tEndNanos(),
                    none.sendMs(),
                    none.ttftMs(),
                    none.e2eMs(),
                    none.tpotMs(),
                    none.itlMs(),
                    none.errorText(),
                    none.bytesReceived(),
                    none.cachedTokens(),
                    none.textHead(),
                    written);
            StepFailure f = judge("vllm", r, null).orElseThrow();
            assertThat(f.failureClass()).isEqualTo(FailureClass.TOKEN_MISMATCH);
            assertThat(f.detail())
                    .contains("reported usage.prompt_tokens as " + written + ", not a whole number")
                    .doesNotContain("reported no");
        }
    }

    @Test
    void lmdeploysEmptyAnswerIsTruncation() {
        StepFailure f = judge("lmdeploy", ok((int) TARGET, 0), null).orElseThrow();
        assertThat(f.failureClass()).isEqualTo(FailureClass.TRUNCATED);
        assertThat(f.detail()).contains("session length");
    }

    @Test
    void aFiveHundredFromAServerThatDiedIsACrashAndFromALiveOneAnHttpError() {
        RequestRecord error = record(500, RequestOutcome.HTTP_STATUS, null, null, "Internal Server Error");

        StepFailure dead = judge("vllm", error, Termination.exited(137)).orElseThrow();
        assertThat(dead.failureClass()).isEqualTo(FailureClass.SERVER_CRASH);
        assertThat(dead.exitCode()).isEqualTo(137);
        assertThat(dead.detail()).contains("signal 9").contains("out of memory?");
        assertThat(dead.evidence()).anySatisfy(l -> assertThat(l).contains("illegal memory access"));

        assertThat(judge("vllm", error, null).orElseThrow().failureClass()).isEqualTo(FailureClass.HTTP_ERROR);
    }

    @Test
    void aHangIsATimeoutAndGarbageAnHttpError() {
        RequestRecord hung = record(200, RequestOutcome.TIMEOUT, null, null, "no event within 30 s");
        assertThat(judge("vllm", hung, null).orElseThrow().failureClass()).isEqualTo(FailureClass.TIMEOUT);
        // A streaming server answers 200 with its headers at once; the body comes with the first token.
        assertThat(judge("vllm", hung, null).orElseThrow().detail())
                .contains("the server answered 200 with its headers, then sent no byte of the body")
                .doesNotContain("0 bytes received");
        RequestRecord silent = record(0, RequestOutcome.TIMEOUT, null, null, "no status within 30 s");
        assertThat(judge("vllm", silent, null).orElseThrow().detail())
                .contains("nothing came back, not even a status line");
        // A hang is a hang even if the server died later: the request was not cut by the death.
        assertThat(Judge.mayMeanCrash(Engines.profile("vllm"), hung)).isFalse();

        RequestRecord garbage = record(200, RequestOutcome.PROTOCOL_ERROR, null, null, "not a server-sent event line");
        assertThat(judge("vllm", garbage, null).orElseThrow().failureClass()).isEqualTo(FailureClass.HTTP_ERROR);
        assertThat(Judge.mayMeanCrash(Engines.profile("vllm"), garbage)).isTrue();
    }

    @Test
    void aLengthRefusalNeverWaitsForACrash() {
        RequestRecord refused = record(
                400,
                RequestOutcome.HTTP_STATUS,
                null,
                null,
                "{\"object\":\"error\",\"message\":\"This model's maximum context length is 8000 tokens.\"}");
        assertThat(Judge.mayMeanCrash(Engines.profile("vllm"), refused)).isFalse();
        assertThat(judge("vllm", refused, Termination.exited(1)).orElseThrow().failureClass())
                .isEqualTo(FailureClass.REQUEST_REJECTED);
    }

    @Test
    void aWarmUpFailureIsReportedInTheWarmUpPhase() {
        RequestRecord refused = record(400, RequestOutcome.HTTP_STATUS, null, null, "too many tokens");
        Optional<StepFailure> f = Judge.requests(new Judge.Observation(
                Engines.profile("vllm"),
                TARGET,
                false,
                Duration.ofSeconds(30),
                List.of(refused),
                List.of(),
                List.of(),
                null,
                ServedCapacity.NONE,
                0));
        assertThat(f.orElseThrow().phase()).isEqualTo(Phase.WARMUP);
    }

    @Test
    void aSigkillTheKernelsCountClearsIsSaidToComeFromOutside() {
        List<String> log = List.of("INFO Initializing a V1 LLM engine");
        Termination outside = new Termination(
                null,
                9,
                Ended.Reason.EXITED,
                "killed from outside: not the OOM killer of this cgroup (oom_kill"
                        + " unchanged at 0), so an operator or another program");
        StepFailure f =
                Judge.startup(Engines.profile("vllm"), new Readiness.Exited(Duration.ofSeconds(3), outside), log);
        assertThat(f.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(f.detail()).contains("signal 9: killed from outside").doesNotContain("OOM killer or");
    }

    @Test
    void whatAClusterSaysOfItsJobComesBeforeTheLog() {
        List<String> log = List.of("INFO Initializing a V1 LLM engine", "Killed");
        Termination oom = new Termination(null, 9, Ended.Reason.OUT_OF_MEMORY, "Slurm job 5 FAILED");
        StepFailure atStartup =
                Judge.startup(Engines.profile("vllm"), new Readiness.Exited(Duration.ofSeconds(3), oom), log);
        assertThat(atStartup.failureClass()).isEqualTo(FailureClass.OOM_STARTUP);
        assertThat(atStartup.phase()).isEqualTo(Phase.STARTUP);
        assertThat(atStartup.evidence()).first().asString().contains("Slurm job 5 FAILED");

        Termination limit = new Termination(null, 15, Ended.Reason.TIME_LIMIT, "Slurm job 6 TIMEOUT");
        StepFailure ended =
                Judge.startup(Engines.profile("vllm"), new Readiness.Exited(Duration.ofSeconds(3), limit), log);
        assertThat(ended.failureClass()).isEqualTo(FailureClass.CLUSTER_ENDED);
        assertThat(ended.detail()).contains("launcher.time");
        assertThat(FailureClass.CLUSTER_ENDED.saysSomethingAboutLength()).isFalse();
    }

    @Test
    void aJobThatDiesWhileServingIsACrashForMemoryAndTheClustersEndOtherwise() {
        RequestRecord broken = record(0, RequestOutcome.CONNECTION_FAILED, null, null, "unexpected end of stream");
        Termination oom = new Termination(null, 9, Ended.Reason.OUT_OF_MEMORY, "Slurm job 5 FAILED");
        assertThat(judge("vllm", broken, oom).orElseThrow().failureClass()).isEqualTo(FailureClass.SERVER_CRASH);
        for (Ended.Reason r : List.of(
                Ended.Reason.TIME_LIMIT, Ended.Reason.NODE_FAILURE, Ended.Reason.PREEMPTED, Ended.Reason.CANCELLED)) {
            Termination how = new Termination(null, 9, r, "Slurm job 7");
            assertThat(judge("vllm", broken, how).orElseThrow().failureClass())
                    .as(r.id())
                    .isEqualTo(FailureClass.CLUSTER_ENDED);
        }
    }

    @Test
    void aJobStillQueuedIsAQueueTimeoutNamingTheReason() {
        StepFailure q = Judge.startup(
                Engines.profile("vllm"),
                new Readiness.Queued(Duration.ofSeconds(5), "PENDING", "PartitionDown"),
                List.of());
        assertThat(q.failureClass()).isEqualTo(FailureClass.QUEUE_TIMEOUT);
        assertThat(q.detail()).contains("PartitionDown").contains("launcher.partition");
        assertThat(q.evidence()).containsExactly("job state PENDING, reason PartitionDown, queued 5.0 s");
        assertThat(FailureClass.QUEUE_TIMEOUT.saysSomethingAboutLength()).isFalse();
    }
}
