package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What each engine's progress endpoint shows, read from its real answers (docs/failures.md, no progress). */
class ProgressTest {

    private static Optional<Progress.Sample> read(String engine, String body) {
        return Engines.profile(engine).progress().read().apply(body);
    }

    /** llama-server b11669's GET /slots during a prefill (params cut), then after the next batch. */
    @Test
    void llamaCppSlotsMoveWithEachPrefillBatch() {
        String before = "[{\"id\":0,\"n_ctx\":300032,\"speculative\":false,\"is_processing\":true,\"id_task\":1,"
                + "\"n_prompt_tokens\":4096,\"n_prompt_tokens_processed\":2048,\"n_prompt_tokens_cache\":0,"
                + "\"params\":{\"max_tokens\":1},\"next_token\":[{\"has_next_token\":true,\"n_remain\":1,"
                + "\"n_decoded\":0}]}]";
        String after = before.replace("\"n_prompt_tokens\":4096", "\"n_prompt_tokens\":6144")
                .replace("\"n_prompt_tokens_processed\":2048", "\"n_prompt_tokens_processed\":4096");
        Progress.Sample a = read("llamacpp", before).orElseThrow();
        Progress.Sample b = read("llamacpp", after).orElseThrow();
        assertThat(a.busy()).isTrue();
        assertThat(a.signature()).isNotEqualTo(b.signature());
        assertThat(a.shown()).contains("n_prompt_tokens_processed=2048");
        assertThat(a.counts()).isEqualTo(new Progress.Counts(1, null, null));
        Progress.Sample idle = read(
                        "llamacpp", "[{\"id\":0,\"n_ctx\":300032,\"speculative\":false,\"is_processing\":false}]")
                .orElseThrow();
        assertThat(idle.busy()).isFalse();
        assertThat(idle.counts().running()).isZero();
        assertThat(read(
                        "llamacpp",
                        "{\"error\":{\"code\":501,\"message\":\"This server does not support slots endpoint.\"}}"))
                .isEmpty();
    }

    @Test
    void vllmMetricsShowRequestsHeldAndWhatMoves() {
        String hung = """
                # HELP vllm:num_requests_running Number of requests in model execution batches.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="m"} 0.0
                vllm:num_requests_waiting{engine="0",model_name="m"} 1.0
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.0
                vllm:prompt_tokens_total{engine="0",model_name="m"} 12000.0
                vllm:generation_tokens_total{engine="0",model_name="m"} 3.0
                """;
        Progress.Sample s = read("vllm", hung).orElseThrow();
        assertThat(s.busy()).isTrue();
        assertThat(s.shown()).contains("vllm:num_requests_waiting=1").contains("vllm:kv_cache_usage_perc=0");
        assertThat(s.counts()).isEqualTo(new Progress.Counts(0, 1, null));
        assertThat(read("vllm", hung + "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 3.0\n")
                        .orElseThrow()
                        .counts())
                .isEqualTo(new Progress.Counts(0, 1, 3L));
        Progress.Sample moved = read(
                        "vllm",
                        hung.replace(
                                "perc{engine=\"0\",model_name=\"m\"} 0.0", "perc{engine=\"0\",model_name=\"m\"} 0.25"))
                .orElseThrow();
        assertThat(moved.signature()).isNotEqualTo(s.signature());
        assertThat(read("vllm", "vllm:cache_config_info{block_size=\"16\"} 1.0\n"))
                .isEmpty();
    }

    @Test
    void sglangMetricsShowRequestsHeld() {
        Progress.Sample s = read(
                        "sglang",
                        "sglang:num_running_reqs{model_name=\"m\"} 1.0\nsglang:num_queue_reqs{model_name=\"m\"} 0.0\n"
                                + "sglang:token_usage{model_name=\"m\"} 0.42\n")
                .orElseThrow();
        assertThat(s.busy()).isTrue();
        assertThat(s.shown()).contains("sglang:token_usage=0.420000");
        assertThat(s.counts()).isEqualTo(new Progress.Counts(1, 0, null));
    }
}
