package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CapacityTest {

    static Stream<Arguments> startupLogs() {
        return Stream.of(
                Arguments.of("vllm", """
                        INFO 07-08 14:35:30 [gpu_model_runner.py:2007] Model loading took 142.3 GiB and 61.2 seconds
                        (EngineCore_DP0 pid=123) INFO 07-08 14:35:34 [kv_cache_utils.py:716] GPU KV cache size: 1,234,567 tokens
                        (EngineCore_DP0 pid=123) INFO 07-08 14:35:34 [kv_cache_utils.py:720] Maximum concurrency for 1,049,600 tokens per request: 1.18x
                        """, 1_234_567L, null),
                Arguments.of("vllm", """
                        INFO 07-08 14:35:33 [config.py:1200] Auto-fit max_model_len: reduced from 1,048,576 to 998,912
                        INFO 07-08 14:35:34 [kv_cache_utils.py:716] GPU KV cache size: 998,944 tokens
                        """, 998_944L, 998_912L),
                Arguments.of("vllm", """
                        (EngineCore_DP0 pid=1) INFO 07-08 14:35:34 [kv_cache_utils.py:716] GPU KV cache size: 100 tokens
                        (EngineCore_DP1 pid=2) info 07-08 14:35:35 [kv_cache_utils.py:716] gpu kv cache size: 12,345 TOKENS
                        """, 12_345L, null),
                Arguments.of(
                        "sglang",
                        "[2026-07-08 14:35:34 TP0] max_total_num_tokens=1234567, chunked_prefill_size=8192,"
                                + " max_prefill_tokens=16384, max_running_requests=1, context_len=1048576,"
                                + " available_gpu_mem=12.34 GB",
                        1_234_567L,
                        null),
                Arguments.of(
                        "sglang-kunlun",
                        "[2026-07-09 03:31:40 TP0] KV Cache is allocated. #tokens: 1,234,560, K size: 40.00 GB,"
                                + " V size: 40.00 GB",
                        1_234_560L,
                        null),
                Arguments.of("llamacpp", """
                        llama_context: constructing llama_context
                        llama_context: n_seq_max     = 1
                        llama_context: n_ctx         = 40960
                        llama_context: n_ctx_per_seq = 40960
                        slot         init: id  0 | task -1 | new slot n_ctx_slot = 40960
                        """, null, null), // n_ctx is the configured context, not a capacity
                Arguments.of("trtllm", """
                        [07/08/2026-14:35:34] [TRT-LLM] [I] [MemUsageChange] Allocated 45.00 GiB for max tokens in paged KV cache (1,234,560).
                        [07/08/2026-14:35:34] [TRT-LLM] [W] Adjusted max_seq_len to 998912
                        """, 1_234_560L, 998_912L),
                Arguments.of(
                        "tgi",
                        "\u001B[2m2026-07-08T14:35:34.123456Z\u001B[0m \u001B[32m INFO\u001B[0m"
                                + " \u001B[2mtext_generation_router::server\u001B[0m\u001B[2m:\u001B[0m"
                                + " Setting max batch total tokens to 147760",
                        147_760L,
                        null),
                Arguments.of(
                        "embedded",
                        "12:00:01.123 ctxprobe-serve: kv capacity 43,690 tokens in 8,388,608 bytes, ctx-size 40,192",
                        43_690L,
                        null),
                Arguments.of("lmdeploy", "INFO: Uvicorn running on http://127.0.0.1:23333", null, null));
    }

    @ParameterizedTest(name = "{0}: kv {2}, hint {3}")
    @MethodSource("startupLogs")
    void readsCapacityFromTheStartupLog(String engine, String log, Long kv, Long hint) {
        Capacity capacity = Engines.profile(engine).readCapacity(log.lines().toList());
        assertThat(capacity).isEqualTo(new Capacity(kv, hint == null ? null : new Limit(hint, null)));
    }
}
