package dev.ctxprobe.predict;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The three renderings of one plan say the same thing. */
class PlanFormatTest {
    private static Prediction plan;

    @BeforeAll
    static void predict() throws Exception {
        plan = Predictor.plan(
                Fixtures.experiment("experiments/dsv4-h200.yaml"),
                PredictInputs.none().withModelConfig(Fixtures.V4_FLASH),
                Engines::sizing);
    }

    @Test
    void textLeadsWithOneLinePerBackend() {
        String text = PlanFormat.text(plan);

        assertThat(text).startsWith("plan for dsv4_h200_max_context_length (experiments/dsv4-h200.yaml)\n");
        assertThat(text).contains("\nsglang  predicted 1,047,552 tokens (set by the model config)\n");
        assertThat(text).contains("\nvllm    predicted 1,047,552 tokens (set by the model config)\n");
        assertThat(text).contains("  missing:\n    weights: ");
        assertThat(text).contains("warnings:\n  sglang: sweep.targets[8]: target 1,048,576");
    }

    @Test
    void markdownHasTheSummaryTableAndEscapesCells() {
        String md = PlanFormat.markdown(plan);

        assertThat(md).startsWith("# Plan: dsv4_h200_max_context_length\n");
        assertThat(md).contains("| backend | engine | predicted target | set by |\n|---|---|---:|---|\n");
        assertThat(md).contains("| vllm | vllm | 1,047,552 | the model config |\n");
        assertThat(md).contains("| input | value | source | where |");
        assertThat(md).contains("**Warnings**");
        assertThat(md).doesNotContain("<");
    }

    @Test
    void jsonUsesSnakeCaseAndLowerCaseIds() throws Exception {
        JsonNode root = JsonMapper.builder().build().readTree(PlanFormat.json(plan));

        JsonNode vllm = root.get("backends").get(1);
        assertThat(vllm.get("backend").asString()).isEqualTo("vllm");
        assertThat(vllm.get("target").asLong()).isEqualTo(1_047_552);
        assertThat(vllm.get("largest_target").asLong()).isEqualTo(1_047_552);
        assertThat(vllm.get("context_pad").asLong()).isEqualTo(1_024);
        assertThat(vllm.get("bound").asString()).isEqualTo("model_config");
        assertThat(vllm.get("kv").isNull()).isTrue();
        assertThat(vllm.get("inputs").get(0).get("source").asString()).isEqualTo("experiment");
        assertThat(vllm.get("missing").get(0).has("how")).isTrue();
        assertThat(root.get("warnings").get(0).get("path").asString()).isEqualTo("sweep.targets[8]");

        JsonNode one = JsonMapper.builder()
                .build()
                .readTree(PlanFormat.json(plan.backends().getFirst()));
        assertThat(one.get("summary").asString())
                .isEqualTo(plan.backends().getFirst().summary());
    }
}
