package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.FailureClass;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StartupDiagnosisTest {

    private static final String VLLM_REFUSAL = "(EngineCore_DP0 pid=123) ValueError: To serve at least one request"
            + " with the models's max seq len (1049600), (120.15 GiB KV cache is needed, which is larger than the"
            + " available KV cache memory (114.47 GiB). Based on the available memory, the estimated maximum model"
            + " length is 1000000. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when"
            + " initializing the engine.";

    static Stream<Arguments> exits() {
        return Stream.of(
                Arguments.of(
                        "vllm",
                        1,
                        """
                        INFO 07-08 14:35:30 [core.py:71] Initializing a V1 LLM engine (v0.10.1) with config: max_seq_len=1049600
                        (EngineCore_DP0 pid=123) ERROR 07-08 14:35:34 [core.py:700] EngineCore failed to start.
                        (EngineCore_DP0 pid=123) Traceback (most recent call last):
                        (EngineCore_DP0 pid=123)   File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 691, in run_engine_core
                        %s
                        RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
                        """.formatted(VLLM_REFUSAL),
                        FailureClass.KV_INSUFFICIENT,
                        1_000_000L,
                        null,
                        "the estimated maximum model length is 1,000,000; lower max_model_len"),
                Arguments.of(
                        "vllm",
                        1,
                        // Lower case and commas: match case-insensitively, read numbers with separators.
                        "value error: to serve at least one request with the models's max seq len (65,792), ..."
                                + " BASED ON THE AVAILABLE MEMORY, THE ESTIMATED MAXIMUM MODEL LENGTH IS 43,690.",
                        FailureClass.KV_INSUFFICIENT,
                        43_690L,
                        null,
                        "max model length 65,792 does not fit"),
                Arguments.of(
                        "vllm",
                        1,
                        """
                        INFO 05-02 10:00:00 [worker.py:100] # GPU blocks: 1250, # CPU blocks: 512
                        ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
                        """,
                        FailureClass.KV_INSUFFICIENT,
                        20_000L,
                        20_000L,
                        "KV cache holds 20,000 tokens, 32,768 needed"),
                Arguments.of("vllm", 1, """
                        (EngineCore_DP0 pid=9) ERROR 07-08 14:35:34 [core.py:700] EngineCore failed to start.
                        (EngineCore_DP0 pid=9) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.81 GiB of which 1.06 GiB is free.
                        """, FailureClass.OOM_STARTUP, null, null, "ran out of accelerator memory"),
                Arguments.of(
                        "vllm",
                        1,
                        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`"
                                + " when initializing the engine.",
                        FailureClass.OOM_STARTUP,
                        null,
                        null,
                        "no accelerator memory is left for the KV cache"),
                Arguments.of(
                        "vllm",
                        1,
                        """
                        pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig
                          Value error, User-specified max_model_len (2000000) is greater than the derived max_model_len (max_position_embeddings=1048576.0 or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.
                        """,
                        FailureClass.CONFIG_REJECTED,
                        1_048_576L,
                        null,
                        "above the model's own limit of 1,048,576 tokens"),
                Arguments.of("vllm", 2, """
                        usage: vllm serve [model_tag] [options]
                        vllm serve: error: argument --max-num-seqs: invalid int value: 'many'
                        """, FailureClass.CONFIG_REJECTED, null, null, "invalid int value: 'many'"),
                Arguments.of(
                        "lmdeploy",
                        2,
                        "lmdeploy: error: unrecognized arguments: --max-model-len 4096",
                        FailureClass.CONFIG_REJECTED,
                        null,
                        null,
                        "unrecognized arguments"),
                Arguments.of(
                        "sglang",
                        1,
                        """
                        [2026-07-08 14:35:31] Traceback (most recent call last):
                        [2026-07-08 14:35:31] ValueError: User-specified context_length (2000000) is greater than the derived context_length (1048576). This may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1
                        """,
                        FailureClass.CONFIG_REJECTED,
                        1_048_576L,
                        null,
                        "context_length is above the model's own limit of 1,048,576 tokens"),
                Arguments.of("sglang", 1, """
                        [2026-07-08 14:35:31 TP3] Scheduler hit an exception: Traceback (most recent call last):
                        [2026-07-08 14:35:31 TP3] Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 1.50 GiB.
                        """, FailureClass.OOM_STARTUP, null, null, "Capture cuda graph failed"),
                Arguments.of(
                        "sglang",
                        1,
                        "[2026-07-08 14:35:31 TP0] RuntimeError: Not enough memory. Please try to increase"
                                + " --mem-fraction-static.",
                        FailureClass.OOM_STARTUP,
                        null,
                        null,
                        "raise --mem-fraction-static"),
                Arguments.of("sglang-kunlun", 134, """
                        [2026-07-09 03:31:40 TP0] KV Cache is allocated. #tokens: 1,234,560
                        terminate called after throwing an instance of 'std::bad_alloc'
                          what():  std::bad_alloc
                        """, FailureClass.OOM_STARTUP, null, 1_234_560L, "std::bad_alloc"),
                Arguments.of(
                        "llamacpp",
                        1,
                        """
                        llama_context: n_ctx         = 1048576
                        llama_context: n_ctx_per_seq = 1048576
                        ggml_backend_cuda_buffer_type_alloc_buffer: allocating 131072.00 MiB on device 0: cudaMalloc failed: out of memory
                        llama_kv_cache_unified: failed to allocate buffer for kv cache
                        llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
                        common_init_from_params: failed to create context with model '/models/m.gguf'
                        srv    load_model: failed to load model, '/models/m.gguf'
                        main: exiting due to model loading error
                        """,
                        FailureClass.KV_INSUFFICIENT,
                        null, // n_ctx is what failed, not a capacity: no hint
                        null,
                        "could not allocate the KV cache for a context of 1,048,576 tokens"),
                Arguments.of(
                        "llamacpp",
                        1,
                        """
                        llama_context: n_ctx         = 262144
                        ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 68719476736
                        llama_init_from_model: failed to allocate compute pp buffers
                        """,
                        FailureClass.OOM_STARTUP,
                        null,
                        null,
                        "failed to allocate compute pp buffers"),
                Arguments.of(
                        "llamacpp",
                        1,
                        "error: invalid argument: --context-size-please",
                        FailureClass.CONFIG_REJECTED,
                        null,
                        null,
                        "invalid argument"),
                Arguments.of(
                        "tgi",
                        1,
                        """
                        2026-07-08T14:35:30.000000Z  INFO text_generation_router::server: router/src/server.rs:1900: Setting max batch total tokens to 65536
                        2026-07-08T14:35:30.100000Z ERROR text_generation_launcher: Webserver Crashed
                        Error: ArgumentValidation("`max_total_tokens` must be <= `max_batch_total_tokens`. Given: 131072 and 65536")
                        """,
                        FailureClass.KV_INSUFFICIENT,
                        65_536L,
                        65_536L,
                        "the KV cache holds 65,536 tokens in a batch"),
                Arguments.of(
                        "tgi",
                        1,
                        "\u001B[2m2026-07-08T14:35:30Z\u001B[0m \u001B[32m INFO\u001B[0m Setting max batch total tokens to"
                                + " 147,760\n\u001B[31mERROR\u001B[0m `max_total_tokens` must be <="
                                + " `max_batch_total_tokens`",
                        FailureClass.KV_INSUFFICIENT,
                        147_760L,
                        147_760L,
                        "147,760 tokens"),
                Arguments.of(
                        "embedded",
                        1,
                        """
                        12:00:00.001 ctxprobe-serve: model /tmp/micro.gguf, ctx-size 65,792
                        12:00:00.002 ctxprobe-serve: kv budget exceeded: 8,388,608 bytes hold 43,690 tokens, 65,792 requested
                        """,
                        FailureClass.KV_INSUFFICIENT,
                        43_690L,
                        43_690L,
                        "the KV budget holds 43,690 tokens, 65,792 requested"),
                Arguments.of(
                        "embedded",
                        1,
                        "ctxprobe-serve: llama.cpp could not allocate the context: failed to allocate buffer",
                        FailureClass.OOM_STARTUP,
                        null,
                        null,
                        "could not allocate the context"),
                Arguments.of(
                        "embedded",
                        2,
                        """
                        ctxprobe-serve: kv capacity 43,690 tokens in 8,388,608 bytes, ctx-size 4,096
                        ctxprobe serve: port 8000 on 127.0.0.1 is already in use; stop the process holding it or choose\
                         another with --port (0 picks a free one)
                        """,
                        FailureClass.PORT_BUSY,
                        null,
                        43_690L,
                        "the port was taken between the check and the launch"),
                Arguments.of(
                        "vllm",
                        1,
                        """
                        INFO 07-08 14:35:30 [api_server.py:1000] vLLM API server version 0.10.1
                        (EngineCore_DP0 pid=123) Traceback (most recent call last):
                        (EngineCore_DP0 pid=123)   File "x.py", line 1, in <module>
                        (EngineCore_DP0 pid=123) KeyError: 'deepseek_v4'
                        RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
                        """,
                        FailureClass.STARTUP_CRASH,
                        null,
                        null,
                        "vllm exited with code 1 during startup: (EngineCore_DP0 pid=123) KeyError: 'deepseek_v4'"),
                Arguments.of(
                        "trtllm",
                        137,
                        "Loading safetensors checkpoint shards:  50% Completed | 2/4",
                        FailureClass.STARTUP_CRASH,
                        null,
                        null,
                        "was killed (exit code 137, signal 9: the kernel's OOM killer or an operator) during startup: the log"
                                + " names no cause; its last line: Loading"));
    }

    @ParameterizedTest(name = "{0} exit {1}: {3}")
    @MethodSource("exits")
    void classifiesAnExitDuringStartup(
            String engine, int exitCode, String log, FailureClass expected, Long hint, Long kv, String detailPart) {
        Diagnosis d = Engines.profile(engine)
                .diagnoseStartup(exitCode, log.lines().toList())
                .orElseThrow();
        assertThat(d.failureClass()).isEqualTo(expected);
        assertThat(d.named().maxContextHint()).isEqualTo(hint);
        assertThat(d.named().kvCapacityTokens()).isEqualTo(kv);
        assertThat(d.detail()).contains(detailPart).doesNotContain("\n");
        assertThat(d.evidence()).isNotEmpty().hasSizeLessThanOrEqualTo(Diagnosis.MAX_EVIDENCE_LINES);
        assertThat(d.evidence()).allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(302));
    }

    @Test
    void longRefusalLineKeepsThePartThatMattersInEvidence() {
        Diagnosis d = Engines.profile("vllm")
                .diagnoseStartup(1, List.of("x".repeat(400) + " " + VLLM_REFUSAL))
                .orElseThrow();
        assertThat(d.evidence()).singleElement().asString().contains("estimated maximum model length");
    }

    @Test
    void evidenceIsCappedAtTenLines() {
        List<String> log = Stream.concat(
                        Stream.generate(() -> "RuntimeError: something else").limit(30),
                        Stream.of("torch.OutOfMemoryError: CUDA out of memory."))
                .toList();
        Diagnosis d = Engines.profile("vllm").diagnoseStartup(1, log).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.OOM_STARTUP);
        assertThat(d.evidence()).hasSizeLessThanOrEqualTo(10).contains("torch.OutOfMemoryError: CUDA out of memory.");
    }

    @Test
    void stillRunningAtTheDeadlineIsATimeoutWithTheCapacitySoFar() {
        List<String> log = List.of(
                "INFO 07-08 14:35:34 [kv_cache_utils.py:716] GPU KV cache size: 1,234,567 tokens",
                "INFO 07-08 14:35:35 [gpu_model_runner.py:2500] Capturing CUDA graphs (mixed prefill-decode): 40%",
                "");
        Diagnosis d = Engines.profile("vllm").diagnoseStartup(null, log).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_TIMEOUT);
        assertThat(d.named().kvCapacityTokens()).isEqualTo(1_234_567L);
        assertThat(d.detail()).contains("still not ready").contains("Capturing CUDA graphs");
        assertThat(d.evidence()).hasSize(2);
    }

    @Test
    void timeoutWinsOverFailureTextsWhileTheServerStillRuns() {
        Diagnosis d = Engines.profile("sglang")
                .diagnoseStartup(null, List.of("Exception: Capture cuda graph failed"))
                .orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_TIMEOUT);
    }

    @Test
    void exitWithAnEmptyLogIsACrashThatSaysSo() {
        Diagnosis d = Engines.profile("tgi").diagnoseStartup(0, List.of()).orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.STARTUP_CRASH);
        assertThat(d.detail()).isEqualTo("tgi exited with code 0 during startup: the log is empty");
        assertThat(d.evidence()).isEmpty();
    }

    @Test
    void aLaunchedOpenAiCompatibleServerGetsTheRulesEveryEngineShares() {
        Diagnosis d = Engines.profile("openai")
                .diagnoseStartup(1, List.of("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"))
                .orElseThrow();
        assertThat(d.failureClass()).isEqualTo(FailureClass.OOM_STARTUP);
    }
}
