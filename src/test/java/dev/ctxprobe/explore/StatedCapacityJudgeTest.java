package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.Limit;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The judgement with what the server stated after readiness: a refusal that names the per-slot limit, the hang at
 * the stated capacity, a truncation answered with the flag that stops it; and when a stated capacity steers the
 * search at all.
 */
class StatedCapacityJudgeTest {
    private static final EngineProfile LLAMA = Engines.profile("llamacpp");
    private static final EngineProfile VLLM = Engines.profile("vllm");

    /** What b11669 states with {@code -c 8192 -np 2}: two slots of 4,096, no unified KV cache. */
    private static final ServedCapacity TWO_SLOTS =
            new ServedCapacity(4096L, 4095L, null, 2, false, 1_048_576L, 260, null, null, null, List.of("GET /props"));

    private static RequestRecord answer(long target, int status, RequestOutcome outcome, Integer prompt, String err) {
        long t = 1_000_000_000L;
        boolean ok = outcome == RequestOutcome.OK;
        return new RequestRecord(
                0,
                false,
                target,
                status,
                outcome,
                prompt,
                ok ? 1 : null,
                ok ? "length" : null,
                ok ? 1 : 0,
                ok,
                t,
                t,
                ok ? t + 1_000_000 : null,
                ok ? t + 1_000_000 : null,
                t + 2_000_000,
                0.1,
                ok ? 1.0 : null,
                ok ? 1.0 : null,
                null,
                List.of(),
                err,
                0,
                null,
                "");
    }

    private static StepFailure judge(
            EngineProfile profile, long target, RequestRecord r, List<String> log, ServedCapacity c, long mml) {
        return Judge.requests(new Judge.Observation(
                        profile, target, false, Duration.ofSeconds(3), List.of(), List.of(r), log, null, c, mml))
                .orElseThrow();
    }

    @Test
    void aRefusalBySlotNamesThePerSlotLimitAndTheFlagsThatLiftIt() {
        String body = "{\"error\":{\"code\":400,\"message\":\"request (5000 tokens) exceeds the available context size"
                + " (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":5000,"
                + "\"n_ctx\":4096}}";
        StepFailure f = judge(
                LLAMA, 5000, answer(5000, 400, RequestOutcome.HTTP_STATUS, null, body), List.of(), TWO_SLOTS, 8192);
        assertThat(f.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(f.named().maxContextHint()).isEqualTo(4096L);
        assertThat(f.named().hintKind()).isEqualTo(HintKind.PROMPT_LEN);
        assertThat(f.detail())
                .contains("(the longest prompt it takes is 4,095 tokens)")
                .contains("each of the 2 slots holds 4,096 tokens")
                .contains("pass -np 1, or --kv-unified");
    }

    @Test
    void aRefusalWithoutANumberTakesTheStatedContextAsItsHint() {
        String b4748 = "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size. try"
                + " increasing the context size or enable context shift\",\"type\":\"invalid_request_error\"}}";
        ServedCapacity oneSlot =
                new ServedCapacity(8192L, 8191L, null, 1, null, null, null, null, null, null, List.of("log"));
        StepFailure f = judge(
                LLAMA, 9000, answer(9000, 200, RequestOutcome.ERROR_EVENT, null, b4748), List.of(), oneSlot, 9000);
        assertThat(f.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(f.named().maxContextHint()).isEqualTo(8192L);
        assertThat(f.named().hintKind()).isEqualTo(HintKind.PROMPT_LEN);
    }

    @Test
    void noOutputAtTheStatedKvCapacityIsTheKnownHangNotAPlainTimeout() {
        ServedCapacity fitted = new ServedCapacity(
                10_576L,
                10_575L,
                10_576L,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                List.of("GET /v1/models", "GET /metrics"));
        RequestRecord silent = answer(10_500, 0, RequestOutcome.TIMEOUT, null, "InterruptedIOException: timeout");
        StepFailure hang = judge(VLLM, 10_500, silent, List.of(), fitted, 10_576);
        assertThat(hang.failureClass()).isEqualTo(FailureClass.TIMEOUT);
        assertThat(hang.detail())
                .startsWith("no output at the stated capacity (a known vLLM scheduling hang)")
                .contains("KV 10,576 tokens from GET /v1/models, GET /metrics");
        StepFailure far = judge(VLLM, 8000, silent, List.of(), fitted, 9024);
        assertThat(far.detail()).startsWith("no complete answer within 3.0 s");
    }

    @Test
    void aTruncatedPromptIsShownByTheLogAndAnsweredWithNoContextShift() {
        List<String> log =
                List.of("slot update_slots: id  0 | task 0 | input truncated, n_ctx = 8192, n_keep = 0, n_left = 8192,"
                        + " n_prompt_tokens = 4096");
        StepFailure f =
                judge(LLAMA, 8192, answer(8192, 200, RequestOutcome.OK, 4096, null), log, ServedCapacity.NONE, 9216);
        assertThat(f.failureClass()).isEqualTo(FailureClass.TRUNCATED);
        assertThat(f.detail())
                .contains("counted 4,096 prompt tokens for 8,192 sent")
                .contains("pass --no-context-shift");
        assertThat(f.evidence()).anyMatch(l -> l.contains("input truncated, n_ctx = 8192"));
    }

    @Test
    void aStatedCapacityIsAHintOnlyWhenItIsMoreThanTheConfiguredLengthReadBack() {
        // -c 9300 rounded up to 9472 by b11669: the configuration read back, nothing learnt.
        ServedCapacity echo =
                new ServedCapacity(9472L, 9471L, null, 1, false, null, null, null, null, null, List.of("log"));
        assertThat(LLAMA.capacityHint(echo, 9300, false)).isEmpty();
        // A fixed -c 5000 (5120) below what the step asked for: the server's real limit.
        ServedCapacity fixed =
                new ServedCapacity(5120L, 5119L, null, 1, false, null, null, null, null, null, List.of("log"));
        assertThat(LLAMA.capacityHint(fixed, 9216, false)).hasValue(new Limit(5120, HintKind.PROMPT_LEN));
        // vLLM fitted itself with auto: its length limits max_model_len, the search's launches.
        ServedCapacity fitted =
                new ServedCapacity(20_000L, 19_999L, 20_000L, null, null, null, null, 1_048_576L, null, null, null);
        assertThat(VLLM.capacityHint(fitted, 0, true)).hasValue(new Limit(20_000, HintKind.MAX_MODEL_LEN));
        assertThat(VLLM.capacityHint(fitted, 20_000, false)).isEmpty();
    }

    @Test
    void theSearchReadsTheHintKindTheStepRecordedAndMarksAHangAtCapacity() {
        Scenario.Server server = Scenario.Server.ofHints(null, 1_048_576L, HintKind.MAX_MODEL_LEN);
        Scenario rejected = Scenario.builder("sglang", 1_048_576, 1_049_600, "sglang serve")
                .outcome(Outcome.failed(FailureClass.CONFIG_REJECTED), "server failed to start", null)
                .server(server, null)
                .build();
        Probe p = Exploration.probe(rejected, Engines.profile("sglang"));
        // The profile's own kind is PROMPT_LEN; the rule's kind wins, so the search probes hint - pad at once.
        assertThat(p.hintKind()).isEqualTo(HintKind.MAX_MODEL_LEN);

        ServedCapacity fitted =
                new ServedCapacity(20_000L, 19_999L, 20_000L, null, null, null, null, null, null, null, null);
        Scenario hung = Scenario.builder("vllm", 19_968, 19_984, "vllm serve")
                .outcome(Outcome.failed(FailureClass.TIMEOUT), "request failed", null)
                .server(Scenario.Server.ofHints(null, null, null).withCapacity(fitted), null)
                .build();
        assertThat(Exploration.probe(hung, VLLM).hangAtCapacity()).isTrue();
        Scenario passed = Scenario.builder("vllm", 8192, 9216, "vllm serve")
                .server(Scenario.Server.ofHints(1_000_000L, null, null), null)
                .build();
        // vLLM's KV figure is no pool size for every model: it does not steer.
        assertThat(Exploration.probe(passed, VLLM).hintTokens()).isNull();
    }
}
