package dev.ctxprobe.testengine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.testengine.EngineOptions.Fault;
import dev.ctxprobe.testengine.EngineOptions.Mode;
import org.junit.jupiter.api.Test;

class EngineOptionsTest {

    @Test
    void defaultsImitateAVllmServerWhereEverythingFits() {
        EngineOptions options = EngineOptions.parse("--port", "8000");

        assertThat(options.host()).isEqualTo("127.0.0.1");
        assertThat(options.mode()).isEqualTo(Mode.VLLM);
        assertThat(options.capacity()).isEqualTo(EngineOptions.HUGE_CAPACITY);
        assertThat(options.faults()).isEmpty();
        assertThat(options.refuseAt()).isEmpty();
    }

    @Test
    void eachEnginesContextFlagSetsTheLength() {
        assertThat(EngineOptions.parse("--port", "1", "--context-length", "100").maxModelLen())
                .isEqualTo(100);
        assertThat(EngineOptions.parse("--port", "1", "-c", "200").maxModelLen())
                .isEqualTo(200);
        assertThat(EngineOptions.parse("--port", "1", "--session-len=300").maxModelLen())
                .isEqualTo(300);
    }

    @Test
    void refuseAtListAndRepeatedFaultsAreAllKept() {
        EngineOptions options = EngineOptions.parse(
                "--port",
                "1",
                "--mode",
                "sglang",
                "--refuse-at",
                "29000, 31000",
                "--fault",
                "ignore-sigterm",
                "--fault",
                "leave-child",
                "--prefill-us-per-token",
                "0.5");

        assertThat(options.mode()).isEqualTo(Mode.SGLANG);
        assertThat(options.refuseAt()).containsExactlyInAnyOrder(29_000L, 31_000L);
        assertThat(options.faults()).containsExactlyInAnyOrder(Fault.IGNORE_SIGTERM, Fault.LEAVE_CHILD);
        assertThat(options.prefillUsPerToken()).isEqualTo(0.5);
    }

    @Test
    void aRefusalNamesTheCapacityOrJustBelowTheRefusedLength() {
        assertThat(EngineOptions.parse("--port", "1", "--max-model-len", "2048", "--capacity", "1000")
                        .refusalLimit())
                .isEqualTo(1000);
        assertThat(EngineOptions.parse("--port", "1", "--max-model-len", "2048", "--refuse-at", "2048")
                        .refusalLimit())
                .isEqualTo(2047);
    }

    @Test
    void badArgumentsAreRejectedWithWhatIsWrong() {
        assertThatThrownBy(() -> EngineOptions.parse("--max-model-len", "10")).hasMessageContaining("--port");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "1", "--fault", "melt"))
                .hasMessageContaining("unknown fault 'melt'");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "x"))
                .hasMessageContaining("argument --port: invalid int value: 'x'");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "1", "--speed", "9"))
                .hasMessageContaining("unrecognized argument: --speed");
        assertThatThrownBy(() -> EngineOptions.parse("--port")).hasMessageContaining("expected one argument");
    }

    @Test
    void aModelConfigSizesTheCapacityAsVllmAndSglangDo(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path config = dir.resolve("config.json");
        // 4 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 16,384 B a token; tensor parallel 2 halves the heads.
        java.nio.file.Files.writeString(config, """
                {"num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128}
                """);
        String[] machine = {"--device-memory-gib", "1", "--weights-gib", "1.5"};

        EngineOptions vllm = EngineOptions.parse(concat(
                new String[] {"--port", "1", "--model-config", config.toString(), "--tensor-parallel-size", "2"},
                machine,
                "--gpu-memory-utilization",
                "0.9"));
        EngineOptions sglang = EngineOptions.parse(concat(
                new String[] {"--port", "1", "--mode", "sglang", "--model-config", config.toString(), "--tp-size", "2"},
                machine,
                "--mem-fraction-static",
                "0.9"));

        // round(1 GiB x 0.9) - 1.5 GiB / 2 = 161,061,274 B: 1,228 blocks of 16 x 8,192 B for vLLM, 19,660 tokens of
        // 8,192 B for SGLang's pool.
        assertThat(vllm.capacity()).isEqualTo(1_228 * 16);
        assertThat(sglang.capacity()).isEqualTo(19_660);
        assertThatThrownBy(() -> EngineOptions.parse(
                        "--port",
                        "1",
                        "--mode",
                        "sglang",
                        "--model-config",
                        config.toString(),
                        "--device-memory-gib",
                        "1"))
                .hasMessageContaining("--mem-fraction-static");
    }

    private static String[] concat(String[] a, String[] b, String... c) {
        return java.util.stream.Stream.of(a, b, c)
                .flatMap(java.util.Arrays::stream)
                .toArray(String[]::new);
    }
}
