package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import dev.ctxprobe.results.ServedCapacity;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every engine text ctxprobe knows of, held against the rule that reads it: the real llama-server's recordings
 * (b11669) and quotes (b4748) in {@code engine/llamacpp}, and the texts of vLLM and SGLang as their current sources
 * print them, quoted here beside the older wordings. A version that words a text differently fails here, naming it.
 */
class EngineTextsTest {
    private static final String FIXTURES = "/dev/ctxprobe/engine/llamacpp/";
    private static final EngineProfile LLAMA = Engines.profile("llamacpp");
    private static final EngineProfile VLLM = Engines.profile("vllm");
    private static final EngineProfile SGLANG = Engines.profile("sglang");

    // ---- llama.cpp: what a started server states ----

    static Stream<Arguments> startupLogs() {
        return Stream.of(
                Arguments.of("b11669-startup-np1.log", 8192L, 1, false),
                Arguments.of("b11669-startup-np2.log", 4096L, 2, false),
                Arguments.of("b11669-startup-np2-no-kv-unified.log", 4096L, 2, false),
                Arguments.of("b11669-startup-default-np.log", 8192L, 4, true),
                Arguments.of("b11669-startup-default-np-verbose.log", 8192L, 4, true),
                Arguments.of("b11669-startup-c-rounded.log", 5120L, 1, false),
                Arguments.of("b11669-startup-c-over-n-ctx-train.log", 1_048_576L, 4, true),
                Arguments.of("b11669-startup-c-unset.log", 1_048_576L, 4, true),
                Arguments.of("b11669-fit-on-c-unset-reduced.log", 116_480L, 4, true),
                Arguments.of("b11669-fit-on-c-unset-reduced-verbose.log", 116_480L, 4, true),
                Arguments.of("b11669-fit-off-c-unset.log", 1_048_576L, 4, true),
                Arguments.of("b11669-fit-on-c-unset-cannot-fit.log", 4096L, 4, true),
                Arguments.of("b11669-fit-on-c-set-cannot-fit.log", 8192L, 1, false),
                Arguments.of("b11669-requests.log", 8192L, 1, false),
                Arguments.of("b11669-sigterm-during-prefill.log", 1_048_576L, 1, false));
    }

    @ParameterizedTest(name = "{0}: n_ctx_slot {1}, {2} slots")
    @MethodSource("startupLogs")
    void aStartedServerStatesItsSlotContextInTheLog(String file, long slotContext, int slots, boolean unified)
            throws IOException {
        ServedCapacity c = LLAMA.statedCapacity(lines(file), path -> null);
        assertThat(c.contextTokens()).isEqualTo(slotContext);
        assertThat(c.maxPromptTokens()).isEqualTo(slotContext - 1);
        assertThat(c.slots()).isEqualTo(slots);
        assertThat(c.kvUnified()).isEqualTo(unified);
        assertThat(c.sources()).containsExactly("log");
    }

    @Test
    void verboseLogsStateTheTrainingContextTheVocabularyAndWhatFitLoweredTheContextFrom() throws IOException {
        ServedCapacity verbose = LLAMA.statedInLog(lines("b11669-fit-on-c-unset-reduced-verbose.log"));
        assertThat(verbose.reducedFrom()).isEqualTo(1_048_576L);
        assertThat(verbose.trainContextTokens()).isEqualTo(1_048_576L);
        assertThat(verbose.vocabSize()).isEqualTo(260);
        assertThat(LLAMA.explainLimit(verbose, 1_048_576 + 1024))
                .hasValueSatisfying(why -> assertThat(why)
                        .contains("-fit lowered the context from 1,048,576 to 116,480 tokens")
                        .contains("-fit off"));
        // The same step in llama.cpp's source words it with another prefix.
        assertThat(LLAMA.statedInLog(List.of("llama_params_fit: context size reduced from 1048576 to 116480"))
                        .reducedFrom())
                .isEqualTo(1_048_576L);
        // At default verbosity fit is silent: only n_ctx_slot shows the lowered context.
        assertThat(LLAMA.statedInLog(lines("b11669-fit-on-c-unset-reduced.log")).reducedFrom())
                .isNull();
    }

    @Test
    void aSlotContextAboveTheTrainingContextIsCappedAndSaysSo() throws IOException {
        ServedCapacity c = LLAMA.statedInLog(lines("b11669-startup-c-over-n-ctx-train.log"));
        assertThat(c.trainContextTokens()).isEqualTo(1_048_576L);
        assertThat(LLAMA.explainLimit(c, 2_000_000))
                .hasValueSatisfying(why -> assertThat(why)
                        .isEqualTo("the slot context is capped at 1,048,576 tokens (the model's training context,"
                                + " n_ctx_train)"));
    }

    @Test
    void theBuildIsReadAndSlotAdviceNamesOnlyFlagsItHas() throws IOException {
        Map<String, String> bodies = Map.of("/props", body(fixture("b11669-props.http")));
        assertThat(LLAMA.statedCapacity(List.of(), bodies::get).build()).isEqualTo(11669L);
        assertThat(LLAMA.statedInLog(List.of("main: build = 4748 (d07c6213)")).build())
                .isEqualTo(4748L);
        assertThat(LLAMA.statedInLog(List.of(
                                "0.00.021.050 I cmn  common_param: common_params_print_info: build 11669 (Debian)"
                                        + " with GNU 16.2.0 for Linux x86_64"))
                        .build())
                .isEqualTo(11669L);

        ServedCapacity older =
                new ServedCapacity(4096L, 4095L, null, 2, false, null, null, null, null, 4748L, List.of());
        assertThat(LLAMA.explainLimit(older, 8192))
                .hasValueSatisfying(
                        why -> assertThat(why).contains("pass -np 1").doesNotContain("pass -np 1, or"));
        ServedCapacity current =
                new ServedCapacity(4096L, 4095L, null, 2, false, null, null, null, null, 11669L, List.of());
        assertThat(LLAMA.explainLimit(current, 8192))
                .hasValueSatisfying(why -> assertThat(why).contains("pass -np 1, or --kv-unified"));
    }

    @Test
    void aKvCacheFullWhileServingIsSurfacedThoughEveryRequestWasAnswered() throws IOException {
        assertThat(LLAMA.kvFullWarning(lines("b11669-kv-full-retries.log")))
                .hasValueSatisfying(w -> assertThat(w)
                        .startsWith("the server's KV cache was full 9 times while serving")
                        .contains("retrying with smaller batch size")
                        .contains("not all held at once"));
        assertThat(LLAMA.kvFullWarning(lines("b11669-requests.log"))).isEmpty();
    }

    @Test
    void aCapRaisedByYarnScalingIsSaidWithTheTrainingContextItScales() throws IOException {
        ServedCapacity c = LLAMA.statedInLog(lines("b11669-startup-yarn-capped.log"));
        assertThat(c.trainContextTokens()).isEqualTo(1_048_576L);
        assertThat(c.cappedAt()).isEqualTo(2_097_152L);
        assertThat(c.contextTokens()).isEqualTo(2_097_152L);
        assertThat(LLAMA.explainLimit(c, 3_000_000))
                .hasValueSatisfying(why -> assertThat(why)
                        .isEqualTo("the slot context is capped at 2,097,152 tokens (the training context 1,048,576,"
                                + " scaled by the rope scaling asked for)"));
    }

    @Test
    void theEndpointsStateTheSlotContextTheSlotsTheVocabularyAndTheTrainingContext() throws IOException {
        Map<String, String> bodies = Map.of(
                "/props", body(fixture("b11669-props.http")), "/v1/models", body(fixture("b11669-v1-models.http")));
        ServedCapacity c = LLAMA.statedCapacity(List.of(), bodies::get);
        assertThat(c.contextTokens()).isEqualTo(8192L);
        assertThat(c.maxPromptTokens()).isEqualTo(8191L);
        assertThat(c.slots()).isEqualTo(1);
        assertThat(c.vocabSize()).isEqualTo(260);
        assertThat(c.trainContextTokens()).isEqualTo(1_048_576L);
        assertThat(c.sources()).containsExactly("GET /props", "GET /v1/models");
        // ids inside the 260 of the byte vocabulary, not the default 1000..29999 that no id of it reaches
        assertThat(LLAMA.tokenRange(c).hi()).isLessThanOrEqualTo(260);
        assertThat(LLAMA.tokenRange(ServedCapacity.NONE)).isEqualTo(LLAMA.tokenRange());
    }

    @Test
    void olderBuildsStateTheSplitContextInOtherWords() throws IOException {
        ServedCapacity np2 = LLAMA.statedInLog(lines("b4748-quoted-np2.log"));
        assertThat(np2.contextTokens()).isEqualTo(4096L);
    }

    // ---- llama.cpp: why a server did not start ----

    static Stream<Arguments> startupFailures() {
        return Stream.of(
                Arguments.of(
                        "b11669-kv-alloc-fail.log",
                        1,
                        FailureClass.KV_INSUFFICIENT,
                        "could not allocate the KV cache for a context of 25,000,192 tokens (24,414 MB)"
                                + " (llama_init_from_model: failed to initialize the context: failed to allocate"
                                + " buffer for kv cache); lower -c",
                        "ggml_aligned_malloc: insufficient memory"),
                Arguments.of(
                        "b11669-kv-alloc-fail-fit-off.log",
                        1,
                        FailureClass.KV_INSUFFICIENT,
                        "could not allocate the KV cache for a context of 25,000,192 tokens",
                        "failed to allocate buffer for kv cache"),
                Arguments.of(
                        "b11669-compute-buffer-fail.log",
                        1,
                        FailureClass.OOM_STARTUP,
                        "could not allocate its compute buffers for a context of 25,000,192 tokens (24,414 MB)",
                        "graph_reserve: failed to allocate compute buffers"),
                Arguments.of(
                        "b11669-bad-alloc.log",
                        1,
                        FailureClass.OOM_STARTUP,
                        "could not allocate a context of 2,147,483,648 tokens (llama_init_from_model: failed to"
                                + " initialize the context: std::bad_alloc): far more than memory holds",
                        "std::bad_alloc"),
                Arguments.of(
                        "b11669-bad-flag.log",
                        1,
                        FailureClass.CONFIG_REJECTED,
                        "(error: invalid argument: --no-such-flag)",
                        "--no-such-flag"),
                Arguments.of(
                        "b11669-bad-value.log",
                        1,
                        FailureClass.CONFIG_REJECTED,
                        "(error while handling argument \"-t\": stoi)",
                        "stoi"),
                Arguments.of(
                        "b11669-missing-model.log",
                        1,
                        FailureClass.CONFIG_REJECTED,
                        "llama.cpp cannot load the model (gguf_init_from_file: failed to open GGUF file"
                                + " '/nonexistent/model.gguf' (No such file or directory)); check -m",
                        "failed to open GGUF file"),
                Arguments.of(
                        "b11669-port-taken.log",
                        1,
                        FailureClass.PORT_BUSY,
                        "couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 18080",
                        "couldn't bind"),
                Arguments.of(
                        "b4748-quoted-aligned-malloc.log",
                        134,
                        FailureClass.OOM_STARTUP,
                        "ran out of memory (390,625 MB)",
                        "attempted to allocate 390625.26 MB"),
                Arguments.of(
                        "b4748-quoted-compute-buffers.log",
                        134,
                        FailureClass.OOM_STARTUP,
                        "could not allocate its compute buffers (llama_init_from_model: failed to allocate compute"
                                + " buffers)",
                        "failed to allocate compute buffers"),
                Arguments.of(
                        "b4748-quoted-kv-cache-init.log",
                        134,
                        FailureClass.KV_INSUFFICIENT,
                        "could not allocate the KV cache (llama_kv_cache_init: failed to allocate buffer for kv"
                                + " cache)",
                        "llama_kv_cache_init"),
                Arguments.of(
                        "b4748-quoted-bad-value.log",
                        1,
                        FailureClass.CONFIG_REJECTED,
                        "error while handling argument \"-t\": stoi",
                        "stoi"),
                Arguments.of(
                        "b4748-quoted-port-taken.log",
                        134,
                        FailureClass.PORT_BUSY,
                        "couldn't bind HTTP server socket",
                        "port: 18080"));
    }

    @ParameterizedTest(name = "{0}: {2}")
    @MethodSource("startupFailures")
    void aFailedStartIsClassifiedByItsCauseNeverByTheLinesEveryExitPrints(
            String file, int exitCode, FailureClass expected, String detailPart, String evidencePart)
            throws IOException {
        // b4748 prints the abort line after every failure once its HTTP thread runs.
        List<String> log = new ArrayList<>(lines(file));
        if (file.startsWith("b4748")) {
            log.addAll(lines("b4748-quoted-terminate.log"));
        }
        Diagnosis d = LLAMA.diagnoseStartup(exitCode, log).orElseThrow();
        assertThat(d.failureClass()).as(d.detail()).isEqualTo(expected);
        assertThat(d.detail())
                .contains(detailPart)
                .doesNotContain("terminate called")
                .doesNotContain("common_fit_params")
                .doesNotContain("accelerator");
        assertThat(String.join("\n", d.evidence())).contains(evidencePart);
        assertThat(d.named().maxContextHint())
                .as("a failure to allocate names no capacity")
                .isNull();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("quantizedVWithoutFlashAttention")
    void aQuantizedVCacheWithoutFlashAttentionIsARejectedFlagWithItsOwnAdvice(String file) throws IOException {
        Diagnosis d = LLAMA.diagnoseStartup(1, lines(file)).orElseThrow();
        assertThat(d.failureClass()).as(d.detail()).isEqualTo(FailureClass.CONFIG_REJECTED);
        assertThat(d.detail())
                .containsIgnoringCase("V cache")
                .contains("flash_attn")
                .contains("pass -fa on, or keep -ctv f16")
                .doesNotContain("check -m");
        assertThat(String.join("\n", d.evidence())).contains("flash_attn");
    }

    static Stream<String> quantizedVWithoutFlashAttention() {
        return Stream.of("b11669-quantized-v-without-fa.log", "b4748-quoted-v-quant-without-fa.log");
    }

    @Test
    void aFailedInternalCheckIsTheCauseOfAnAbortNotTheDebuggersBacktrace() throws IOException {
        Diagnosis d =
                LLAMA.diagnoseStartup(134, lines("b11669-assert-abort.log")).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(d.detail())
                .contains("aborted (exit code 134, signal 6)")
                .contains("GGML_ASSERT(n_outputs_max <= cparams.n_outputs_max) failed")
                .doesNotContain("libthread_db")
                .doesNotContain("ggml_abort");
    }

    @Test
    void aCrashWhoseLogNamesNoCauseSaysSoAndQuotesTheLastPhase() throws IOException {
        Diagnosis d = LLAMA.diagnoseStartup(139, lines("b11669-segfault-while-loading.log"))
                .orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(d.detail())
                .contains("signal 11")
                .contains("the log names no cause")
                .contains("its last line: init: llama threadpool init, n_threads = 100000")
                .contains("run the command by hand")
                .doesNotContain("OOM");
        List<String> aborted = new ArrayList<>(lines("b11669-startup-np1.log").subList(0, 5));
        aborted.addAll(lines("b4748-quoted-terminate.log"));
        Diagnosis abort = LLAMA.diagnoseStartup(134, aborted).orElseThrow();
        assertThat(abort.detail())
                .contains("aborted (exit code 134, signal 6)")
                .contains("the log names no cause; its last line: ")
                .doesNotContain("terminate called");
    }

    @Test
    void theAbortEveryOlderExitPrintsIsNeverTheCause() throws IOException {
        Diagnosis d =
                LLAMA.diagnoseStartup(134, lines("b4748-quoted-terminate.log")).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(d.detail()).contains("the log names no cause").doesNotContain("terminate called");
        Diagnosis stopped = LLAMA.diagnoseStartup(1, lines("b11669-sigterm-twice-during-prefill.log"))
                .orElseThrow();
        assertThat(stopped.detail()).doesNotContain("cleaning up before exit");
    }

    @Test
    void theContextAnOlderBuildTriedIsReadFromItsNCtxLine() throws IOException {
        List<String> log = new ArrayList<>(lines("b4748-quoted-c-rounded.log"));
        log.addAll(lines("b4748-quoted-kv-cache-init.log"));
        Diagnosis d = LLAMA.diagnoseStartup(134, log).orElseThrow();
        assertThat(d.detail()).contains("for a context of 5,024 tokens");
    }

    // ---- llama.cpp: a running server's answers ----

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of("b11669-prompt-too-long.http", FailureClass.REQUEST_REJECTED, 8192L),
                Arguments.of("b11669-prompt-too-long-stream.http", FailureClass.REQUEST_REJECTED, 8192L),
                Arguments.of("b11669-prompt-at-n-ctx.http", FailureClass.REQUEST_REJECTED, 8192L),
                Arguments.of("b11669-invalid-token.http", FailureClass.HTTP_ERROR, null),
                Arguments.of("b11669-invalid-token-stream.http", FailureClass.HTTP_ERROR, null),
                Arguments.of("b11669-invalid-token-negative.http", FailureClass.HTTP_ERROR, null),
                Arguments.of("b11669-health-loading.http", FailureClass.HTTP_ERROR, null));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("answers")
    void aRecordedAnswerIsClassifiedWithTheContextItNames(String file, FailureClass expected, Long hint)
            throws IOException {
        String http = fixture(file);
        Diagnosis d = LLAMA.diagnoseResponse(status(http), body(http));
        assertThat(d.failureClass()).as(d.detail()).isEqualTo(expected);
        assertThat(d.named().maxContextHint()).isEqualTo(hint);
        assertThat(d.named().hintKind()).isEqualTo(hint == null ? null : HintKind.PROMPT_LEN);
    }

    @Test
    void anOlderBuildsRefusalNamesNoNumberAsJsonOrAsAnErrorEventInA200Stream() throws IOException {
        Diagnosis plain = LLAMA.diagnoseResponse(400, fixture("b4748-quoted-context-exceeded.json"));
        assertThat(plain.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(plain.named().maxContextHint()).isNull();
        String sse = fixture("b4748-quoted-context-exceeded-stream.sse");
        assertThat(sse).startsWith("error: ");
        String event = sse.lines().findFirst().orElseThrow().substring("error: ".length());
        Diagnosis streamed = LLAMA.diagnoseResponse(200, event);
        assertThat(streamed.failureClass()).isEqualTo(FailureClass.REQUEST_REJECTED);
        assertThat(streamed.detail()).startsWith("error event in a 200 stream: the server rejected the prompt");
    }

    @Test
    void aTruncationIsShownByItsLogLineAndAnsweredWithTheFlagThatStopsIt() throws IOException {
        assertThat(LLAMA.truncationEvidence(lines("b4748-quoted-input-truncated.log")))
                .containsExactly("input truncated, n_ctx = 8192, n_keep = 0, n_left = 8192, n_prompt_tokens = 4904");
        assertThat(LLAMA.truncationAdvice()).contains("pass --no-context-shift");
        assertThat(LLAMA.truncationEvidence(lines("b11669-requests.log"))).isEmpty();
    }

    // ---- vLLM: texts of its current source beside the older ones ----

    private static final String VLLM_REFUSAL_OLD = "ValueError: To serve at least one request with the models's max"
            + " seq len (30000), (6.66 GiB KV cache is needed, which is larger than the available KV cache memory"
            + " (5.44 GiB). Based on the available memory, the estimated maximum model length is 13528. Try increasing"
            + " `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    // As a user's log showed it (vLLM issue 44376).
    private static final String VLLM_REFUSAL_NEW = "ValueError: To serve at least one request with the model's max"
            + " seq len (30000), (6.66 GiB KV cache is needed, which is larger than the available KV cache memory"
            + " (5.44 GiB). Based on the available memory, the estimated maximum model length is 13528. Try increasing"
            + " `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing"
            + " `max_model_len` when initializing the engine.";

    @ParameterizedTest
    @MethodSource("vllmRefusals")
    void bothWordingsOfVllmsRefusalNameTheEstimate(String refusal) {
        Diagnosis d = VLLM.diagnoseStartup(1, List.of(refusal)).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.KV_INSUFFICIENT);
        assertThat(d.named().maxContextHint()).isEqualTo(13_528L);
        assertThat(d.detail()).contains("max model length 30,000 does not fit");
    }

    static Stream<String> vllmRefusals() {
        return Stream.of(VLLM_REFUSAL_OLD, VLLM_REFUSAL_NEW);
    }

    @Test
    void autoFitStatesTheLengthItChoseOrThatItFitsNothing() {
        String reduced = "INFO 11-20 10:00:00 [kv_cache_utils.py:800] Auto-fit max_model_len: reduced from 1048576 to"
                + " 131072 to fit in available GPU memory (12.50 GiB available for KV cache)";
        String full = "INFO 11-20 10:00:00 [kv_cache_utils.py:790] Auto-fit max_model_len: full model context length"
                + " 32768 fits in available GPU memory";
        assertThat(VLLM.readCapacity(List.of(reduced)).maxContextHint()).isEqualTo(131_072L);
        assertThat(VLLM.readCapacity(List.of(full)).maxContextHint()).isEqualTo(32_768L);
        ServedCapacity stated = VLLM.statedInLog(List.of(reduced));
        assertThat(stated.contextTokens()).isEqualTo(131_072L);
        assertThat(stated.reducedFrom()).isEqualTo(1_048_576L);
        assertThat(VLLM.explainLimit(stated.withMaxPrompt(131_071L), 1_048_576))
                .hasValue("auto-fit lowered max_model_len from 1,048,576 to 131,072 tokens to fit memory");
        Diagnosis none = VLLM.diagnoseStartup(
                        1,
                        List.of("ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve"
                                + " even a single token. Try increasing `gpu_memory_utilization`."))
                .orElseThrow();
        assertThat(none.failureClass()).isEqualTo(FailureClass.OOM_STARTUP);
        assertThat(none.detail()).contains("could not fit even a single token in accelerator memory");
    }

    @Test
    void theKvCacheSizeIsReadOnOneLineWithTheConcurrencyAndIsNeverSteeredBy() {
        String merged = "(EngineCore_DP0 pid=1) INFO 11-20 10:00:00 [kv_cache_utils.py:1000] GPU KV cache size:"
                + " 10,576 tokens, Maximum concurrency for 4,096 tokens per request: 2.58x";
        assertThat(VLLM.readCapacity(List.of(merged)).kvCapacityTokens()).isEqualTo(10_576L);
        // Issue 25: the engine's own statement of requests held at once, beside the capacity map.
        assertThat(VLLM.statedInLog(List.of(merged)).maxConcurrency()).isEqualTo(2.58);
        String older = "INFO 11-20 10:00:00 [kv_cache_utils.py:1000] Maximum concurrency for 1,049,600 tokens per"
                + " request: 1.23x";
        assertThat(VLLM.statedInLog(List.of(older)).maxConcurrency()).isEqualTo(1.23);
        // For hybrid and DeepSeek-V4 models the figure is max_concurrency * max_model_len: not a pool size.
        assertThat(VLLM.kvCapacitySteers()).isFalse();
        assertThat(SGLANG.kvCapacitySteers()).isTrue();
    }

    @Test
    void vllmsEndpointsStateItsServedLengthAndItsKvSize() {
        String metrics = """
                # HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
                # TYPE vllm:cache_config_info gauge
                vllm:cache_config_info{block_size="16",cache_dtype="auto",kv_cache_size_tokens="10576",kv_cache_max_concurrency="2.58203125",num_gpu_blocks="661",gpu_memory_utilization="0.7"} 1.0
                """;
        String older = "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"661\"} 1.0\n";
        String models = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":13528}]}";
        Map<String, String> bodies = Map.of("/v1/models", models, "/metrics", metrics);
        ServedCapacity c = VLLM.statedCapacity(List.of(), bodies::get);
        assertThat(c.contextTokens()).isEqualTo(13_528L);
        assertThat(c.maxPromptTokens()).isEqualTo(13_527L);
        assertThat(c.kvTokens()).isEqualTo(10_576L);
        assertThat(c.maxConcurrency()).isEqualTo(2.58203125);
        ServedCapacity old = VLLM.statedCapacity(List.of(), Map.of("/metrics", older)::get);
        assertThat(old.kvTokens()).isEqualTo(661L * 16);
        assertThat(VLLM.statedCapacity(List.of(), path -> "not json").isEmpty()).isTrue();
    }

    // ---- openai: any OpenAI-compatible server ----

    @Test
    void anOpenAiEndpointStatesWhatItsModelsListGivesLlamaServersVocabularyOrVllmsLength() throws IOException {
        EngineProfile openai = Engines.profile("openai");
        // issue 31: against ctxprobe serve (vLLM's card with llama-server's meta) the default ids 1000..29999 were
        // all outside its 260 and the search spent steps above the length the server stated.
        String serve = "{\"object\":\"list\",\"data\":[{\"id\":\"ctxprobe-micro\",\"object\":\"model\","
                + "\"max_model_len\":8192,\"meta\":{\"n_vocab\":260,\"n_ctx\":8192,\"n_ctx_train\":1048576}}]}";
        ServedCapacity c = openai.statedCapacity(List.of(), Map.of("/v1/models", serve)::get);
        assertThat(c.contextTokens()).isEqualTo(8192L);
        assertThat(c.maxPromptTokens()).isEqualTo(8191L);
        assertThat(c.vocabSize()).isEqualTo(260);
        assertThat(openai.tokenRange(c).hi()).isLessThanOrEqualTo(260);
        assertThat(openai.capacityHint(c, 0, false)).isPresent();

        ServedCapacity llama =
                openai.statedCapacity(List.of(), Map.of("/v1/models", body(fixture("b11669-v1-models.http")))::get);
        assertThat(llama.vocabSize()).isEqualTo(260);
        assertThat(llama.contextTokens())
                .as("meta.n_ctx is split among slots: not a limit")
                .isNull();

        String vllm = "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"max_model_len\":13528}]}";
        assertThat(openai.statedCapacity(List.of(), Map.of("/v1/models", vllm)::get)
                        .contextTokens())
                .isEqualTo(13_528L);
    }

    @Test
    void anIdOutsideTheVocabularyPointsAtTokenIds() throws IOException {
        Diagnosis llama = LLAMA.diagnoseResponse(400, body(fixture("b11669-invalid-token.http")));
        assertThat(llama.detail())
                .isEqualTo(
                        "HTTP 400 from the server: Prompt contains invalid tokens; the prompt's token ids are not all"
                                + " in the model's vocabulary: set the backend's token_ids to ids it has"
                                + " (docs/experiment-file.md, backends)");
        Diagnosis serve = Engines.profile("openai")
                .diagnoseResponse(
                        400,
                        "{\"error\":{\"message\":\"token id 1000 at position 0 is out of vocabulary [0, 260) (GET"
                                + " /v1/models states it as meta.n_vocab)\",\"type\":\"BadRequestError\","
                                + "\"param\":\"prompt\",\"code\":400}}");
        assertThat(serve.failureClass()).isEqualTo(FailureClass.HTTP_ERROR);
        assertThat(serve.detail()).contains("set the backend's token_ids");
        Diagnosis other = LLAMA.diagnoseResponse(400, "{\"error\":{\"message\":\"bad temperature\"}}");
        assertThat(other.detail()).doesNotContain("token_ids");
    }

    // ---- SGLang ----

    @Test
    void sglangsSchedulerLineStatesItsPoolAndContextAndACpuBuildSaysMemory() {
        String cpu = "[2026-11-20 10:00:00] max_total_num_tokens=20480, chunked_prefill_size=8192,"
                + " max_prefill_tokens=16384, max_running_requests=1, context_len=32768, available_cpu_mem=40.00 GB";
        String gpu = cpu.replace("available_cpu_mem", "available_gpu_mem");
        assertThat(SGLANG.readCapacity(List.of(cpu)).kvCapacityTokens()).isEqualTo(20_480L);
        ServedCapacity stated = SGLANG.statedInLog(List.of(cpu));
        assertThat(stated.kvTokens()).isEqualTo(20_480L);
        assertThat(stated.contextTokens()).isEqualTo(32_768L);
        assertThat(stated.maxRunningRequests()).isEqualTo(1);
        assertThat(SGLANG.statedInLog(List.of(gpu.replace("max_running_requests=1", "max_running_requests=4096")))
                        .maxRunningRequests())
                .isEqualTo(4_096);
        String oom = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.";
        assertThat(SGLANG.diagnoseStartup(1, List.of(cpu, oom)).orElseThrow().detail())
                .startsWith("not enough memory for the KV cache");
        assertThat(SGLANG.diagnoseStartup(1, List.of(gpu, oom)).orElseThrow().detail())
                .startsWith("not enough accelerator memory for the KV cache");
    }

    @Test
    void deepSeekV4sPoolLineGivesTheFullAttentionPool() {
        String pools = "[2026-11-20 10:00:00 TP0] DSV4 pool sizes: full=1048576, swa=65536, c4=262144, c128=8192,"
                + " c4_state=512, c128_state=512";
        assertThat(SGLANG.readCapacity(List.of(pools)).kvCapacityTokens()).isEqualTo(1_048_576L);
    }

    @Test
    void sglangsEndpointsStateItsInputLimitAndPool() {
        // max_req_input_len = min(context_len - 1, max_total_num_tokens - 1), less newer versions' own reserve.
        String info = "{\"model_path\":\"m\",\"context_length\":null,\"max_total_num_tokens\":20480,"
                + "\"max_req_input_len\":20474,\"internal_states\":[{\"avg_spec_accept_length\":null}]}";
        String older = "{\"internal_states\":[{\"max_total_num_tokens\":20480,\"max_req_input_len\":20479}]}";
        String metrics = """
                # TYPE sglang:max_total_num_tokens gauge
                sglang:max_total_num_tokens{model_name="m"} 20480.0
                # TYPE sglang:context_len gauge
                sglang:context_len{model_name="m"} 32768.0
                """;
        ServedCapacity c = SGLANG.statedCapacity(List.of(), Map.of("/get_server_info", info, "/metrics", metrics)::get);
        assertThat(c.maxPromptTokens()).isEqualTo(20_473L);
        assertThat(c.kvTokens()).isEqualTo(20_480L);
        assertThat(c.contextTokens()).isEqualTo(32_768L);
        assertThat(SGLANG.statedCapacity(List.of(), Map.of("/get_server_info", older)::get)
                        .maxPromptTokens())
                .isEqualTo(20_478L);
    }

    @Test
    void aLimitOnTheModelsContextIsAHintOnMaxModelLenWhateverTheProfileReadsElse() {
        Diagnosis sglang = SGLANG.diagnoseStartup(
                        1,
                        List.of(
                                "ValueError: User-specified context_length (1049600) is greater than the derived"
                                        + " context_length (1048576). This may lead to incorrect model outputs or CUDA errors."))
                .orElseThrow();
        assertThat(sglang.failureClass()).isEqualTo(FailureClass.CONFIG_REJECTED);
        assertThat(sglang.named().maxContextHint()).isEqualTo(1_048_576L);
        assertThat(sglang.named().hintKind()).isEqualTo(HintKind.MAX_MODEL_LEN);
        Diagnosis tgi = Engines.profile("tgi")
                .diagnoseStartup(
                        1,
                        List.of("Error: ArgumentValidation(\"`max_total_tokens` must be <= `max_batch_total_tokens`."
                                + " Given: 131072 and 65536\")"))
                .orElseThrow();
        assertThat(tgi.named().maxContextHint()).isEqualTo(65_536L);
        assertThat(tgi.named().hintKind()).isEqualTo(HintKind.MAX_MODEL_LEN);
        // SGLang's refusal of a request still bounds the prompt, also where the openai profile reads it.
        Diagnosis refused = Engines.profile("openai")
                .diagnoseResponse(
                        400,
                        "{\"message\":\"Input length (30000 tokens) exceeds the maximum allowed length (20474"
                                + " tokens).\"}");
        assertThat(refused.named().hintKind()).isEqualTo(HintKind.PROMPT_LEN);
    }

    private static List<String> lines(String file) throws IOException {
        return fixture(file).lines().toList();
    }

    static String fixture(String name) throws IOException {
        try (InputStream in = EngineTextsTest.class.getResourceAsStream(FIXTURES + name)) {
            assertThat(in).as("fixture " + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static int status(String http) {
        return Integer.parseInt(http.lines().findFirst().orElseThrow().split(" ")[1]);
    }

    static String body(String http) {
        int end = http.indexOf("\r\n\r\n");
        return end < 0 ? http : http.substring(end + 4);
    }
}
