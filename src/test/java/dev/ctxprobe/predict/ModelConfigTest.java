package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelConfigTest {
    @TempDir
    Path dir;

    private ModelConfig config(String json) throws Exception {
        Path file = dir.resolve("config.json");
        Files.writeString(file, json);
        return ModelConfig.read(file);
    }

    @Test
    void theRealDeepSeekConfigsAreRecognised() throws Exception {
        ModelConfig v4 = ModelConfig.read(Fixtures.V4_FLASH);
        assertThat(v4.layout()).isEqualTo(ModelConfig.Layout.DEEPSEEK_V4);
        // 43 layers: the 44th ratio belongs to the multi-token-prediction layer.
        assertThat(v4.compressRatios()).hasSize(43);
        assertThat(v4.compressRatios().stream().filter(r -> r == 4)).hasSize(21);
        assertThat(v4.compressRatios().stream().filter(r -> r == 128)).hasSize(20);
        assertThat(v4.vllmMaxLength().tokens()).isEqualTo(1_048_576);

        ModelConfig v32 = ModelConfig.read(Fixtures.resource("deepseek-v3.2.config.json"));
        assertThat(v32.layout()).isEqualTo(ModelConfig.Layout.DEEPSEEK_SPARSE);
        assertThat(v32.sglangContextLength().tokens()).isEqualTo(163_840);
    }

    @Test
    void yarnScalesTheOriginalLengthForVllmAndSglangReadsItsOwnKeyOrder() throws Exception {
        ModelConfig c = config("""
                {"max_position_embeddings": 131072, "seq_length": 8192,
                 "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
                """);
        // vLLM: the smallest key (8,192 from seq_length) is replaced by yarn's original length times the factor.
        assertThat(c.vllmMaxLength().tokens()).isEqualTo(131_072);
        // SGLang: seq_length comes first in its key order; original_max_position_embeddings disables the factor.
        assertThat(c.sglangContextLength().tokens()).isEqualTo(8_192);
    }

    @Test
    void aMultimodalConfigIsReadThroughItsTextConfig() throws Exception {
        ModelConfig c = config("""
                {"architectures": ["Gemma3ForConditionalGeneration"],
                 "text_config": {"num_hidden_layers": 62, "num_key_value_heads": 16, "head_dim": 128,
                                 "sliding_window": 1024, "sliding_window_pattern": 6,
                                 "max_position_embeddings": 131072}}
                """);
        assertThat(c.layers()).isEqualTo(62);
        assertThat(c.layout()).isEqualTo(ModelConfig.Layout.HYBRID_SLIDING);
        assertThat(c.fullLayers()).isEqualTo(10);
        assertThat(c.slidingLayers()).isEqualTo(52);
    }

    @Test
    void numbersAreReadAsEnginesWriteThem() {
        assertThat(Flags.number("32768")).isEqualTo(32_768L);
        assertThat(Flags.number("32k")).isEqualTo(32_000L);
        assertThat(Flags.number("32K")).isEqualTo(32_768L);
        assertThat(Flags.number("1M")).isEqualTo(1_048_576L);
        assertThat(Flags.number("auto")).isNull();
    }
}
