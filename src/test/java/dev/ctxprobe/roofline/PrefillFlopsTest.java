package dev.ctxprobe.roofline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.Roofline;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The FLOPs of a prefill against hand calculations written out here (docs/results.md, "% of roofline"). */
class PrefillFlopsTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final List<String> LINEAR = List.of(PrefillFloor.LINEAR);
    private static final List<String> LINEAR_ATTENTION = List.of(PrefillFloor.LINEAR, PrefillFloor.ATTENTION);

    private static JsonNode json(String text) {
        return JSON.readTree(text);
    }

    private static PrefillFloor floor(JsonNode config, String accelerator, int devices) {
        return Floors.of(new Floors.Inputs(config, "test", null, null, false, null, accelerator, devices, "test"));
    }

    @Test
    void denseGqaModel() {
        // Llama 3 8B's shape: 32 layers, hidden 4096, 32 heads of 128, 8 KV heads, MLP 14336.
        JsonNode config = json("""
                {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336}""");
        PrefillFloor f = floor(config, "NVIDIA H100 80GB HBM3", 1);
        // Per layer: q and o 2 x 4096 x 32 x 128 = 33,554,432; k and v 2 x 4096 x 8 x 128 = 8,388,608;
        // gated MLP 3 x 4096 x 14336 = 176,160,768. 32 layers: 6,979,321,856 parameters, twice that a token.
        assertThat(f.linearFlopsPerToken()).isEqualTo(2.0 * 6_979_321_856L);
        long t = 8192;
        // Causal attention: 4 x 32 heads x 128 per earlier row, sum of t over 1..8192 = 8192 x 8193 / 2, 32 layers.
        double attention = 32 * 4.0 * 32 * 128 * (8192.0 * 8193 / 2);
        assertThat(f.flops(t, LINEAR_ATTENTION)).isEqualTo(2.0 * 6_979_321_856L * t + attention);
        // At the H100's BF16 and FP8 peaks: FP8 first, the headline.
        assertThat(f.at(t)).extracting(Roofline.Floor::dtype).containsExactly("fp8", "bf16");
        assertThat(f.floorS(t)).isCloseTo((2.0 * 6_979_321_856L * t + attention) / 1979e12, within(1e-9));
    }

    @Test
    void moeModel() {
        // Mixtral 8x7B's shape: 2 of 8 experts of 14336 a token, a router of 8 outputs.
        JsonNode config = json("""
                {"architectures": ["MixtralForCausalLM"], "num_hidden_layers": 32, "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
                 "num_local_experts": 8, "num_experts_per_tok": 2}""");
        PrefillFloor f = floor(config, "AMD Instinct MI300X", 2);
        // Per layer: attention 41,943,040; 2 experts 2 x 3 x 4096 x 14336 = 352,321,536; router 4096 x 8 = 32,768.
        // 32 layers: 12,617,515,008 active parameters (Mixtral's card says 12.9B with the embeddings).
        assertThat(f.linearFlopsPerToken()).isEqualTo(2.0 * 12_617_515_008L);
        assertThat(f.flops(1000, LINEAR)).isEqualTo(2.0 * 12_617_515_008L * 1000);
        assertThat(f.peaks().getFirst().tflops()).isEqualTo(2614.9);
        assertThat(f.devices()).isEqualTo(2);
    }

    @Test
    void slidingWindowLayersAreCappedAtTheWindow() {
        JsonNode config = json("""
                {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 1, "intermediate_size": 64,
                 "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 4}""");
        PrefillFloor f = floor(config, "NVIDIA H200", 1);
        // 10 tokens: the window layer reaches 1, 2, 3, 4, 4, 4, 4, 4, 4, 4 rows = 34; the full layer 55.
        double perRow = 4.0 * 64;
        double linear = 2.0 * 2 * (2 * 64 * 64 + 2 * 64 * 64 + 3 * 64 * 64) * 10;
        assertThat(f.flops(10, LINEAR_ATTENTION)).isEqualTo(linear + perRow * (34 + 55));
    }

    @Test
    void deepseekV4FlashAtTheSeedsLongestServedPrompt() {
        KnownModels.Carried carried = KnownModels.byName("/data/models/DeepSeek-V4-Flash");
        PrefillFloor f = Floors.of(
                new Floors.Inputs(carried.config(), "carried", null, null, false, null, "nvidia_h200", 8, "tp"));
        long t = 917_504;
        double tt = t;
        // By hand, after the physics notes in docs/results.md: 26 GFLOP a token of linear work (13B active); 21
        // ratio-4 layers attend to 512 compressed rows and 128 window rows, 4 x 64 heads x 512 a row; 20 ratio-128
        // layers to t/128 rows and the window; the 2 window-only layers to 128 rows; the indexer of the 21 ratio-4
        // layers scores t/4 rows at 2 x 64 x 128 a row.
        double linear = 26e9 * tt;
        double row = 4.0 * 64 * 512;
        double attention = 21 * row * (512 + 128) * tt + 20 * row * (tt * tt / 256 + 128 * tt) + 2 * row * 128 * tt;
        double indexer = 21 * 2.0 * 64 * 128 * tt * tt / 8;
        assertThat(f.flops(t, LINEAR)).isEqualTo(linear);
        assertThat(f.flops(t, LINEAR_ATTENTION)).isCloseTo(linear + attention, within(1e-3 * attention));
        assertThat(f.flops(t, f.parts())).isCloseTo(linear + attention + indexer, within(1e-3 * indexer));

        double fp8 = 8 * 1979e12;
        assertThat(linear / fp8).isCloseTo(1.51, within(0.005));
        assertThat(f.flops(t, LINEAR_ATTENTION) / fp8).isCloseTo(2.17, within(0.01));
        assertThat(f.floorS(t)).isCloseTo(4.46, within(0.01));
        // With BF16 math for the MoE (SGLang's Marlin kernels), the linear layers alone take 3.0 s.
        assertThat(linear / (8 * 989e12)).isCloseTo(3.01, within(0.01));

        // The seed's SGLang TTFT at this length.
        Roofline r = f.judge(t, 3.150);
        assertThat(r.flag()).isEqualTo(Roofline.IMPOSSIBLE);
        assertThat(r.percent()).isCloseTo(141.6, within(0.2));
        assertThat(r.floors())
                .extracting(Roofline.Floor::dtype, Roofline.Floor::counted, Roofline.Floor::flag)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("fp8", "linear+attention+indexer", Roofline.IMPOSSIBLE),
                        org.assertj.core.groups.Tuple.tuple("fp8", "linear+attention", Roofline.PLAUSIBLE),
                        org.assertj.core.groups.Tuple.tuple("bf16", "linear+attention+indexer", Roofline.IMPOSSIBLE),
                        org.assertj.core.groups.Tuple.tuple("bf16", "linear+attention", Roofline.IMPOSSIBLE));
        assertThat(r.floors().get(1).percent()).isCloseTo(69.0, within(0.2));
    }

    @Test
    void theDemoModelOnThisCpu() {
        PrefillFloor f = Floors.of(new Floors.Inputs(null, null, ModelShape.MICRO, "micro", true, 2, null, null, null));
        // 1 layer, width 32, 1 head of 32, MLP 64: attention 4 x 32 x 32 = 4,096, MLP 3 x 32 x 64 = 6,144.
        assertThat(f.linearFlopsPerToken()).isEqualTo(2.0 * (4096 + 6144));
        assertThat(f.flops(100, LINEAR_ATTENTION)).isEqualTo(2.0 * 10240 * 100 + 4.0 * 32 * (100.0 * 101 / 2));
        assertThat(f.devices()).isEqualTo(1);
        assertThat(f.peaks())
                .singleElement()
                .extracting(PrefillFloor.Peak::dtype)
                .isEqualTo("fp32");
    }

    @Test
    void aDeviceWithoutASourcedPeakHasNoFloor() {
        PrefillFloor f = Floors.ofResults(
                new dev.ctxprobe.results.Metadata(
                        null,
                        null,
                        null,
                        "/data1/models/DeepSeek-V4-Flash-INT8",
                        null,
                        null,
                        "8x Kunlun P800 XPU",
                        "Kunlun P800 XPU",
                        "kunlun_p800",
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null),
                java.util.Map.of("tp", 8));
        assertThat(f.known()).isFalse();
        assertThat(f.unknown()).contains("P800").contains("floor is unknown");
        assertThat(f.judge(65536, 1.0).unknown()).contains("P800");
    }
}
