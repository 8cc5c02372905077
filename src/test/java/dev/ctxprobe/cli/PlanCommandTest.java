package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code ctxprobe plan} and the predictions {@code validate} and {@code run --dry-run} show: nothing is launched. */
class PlanCommandTest {
    private static final String V4 = "experiments/models/deepseek-v4-flash.config.json";
    private static final String V32 = "src/test/resources/dev/ctxprobe/predict/deepseek-v3.2.config.json";
    private static final String H200 = "experiments/dsv4-h200.yaml";

    @TempDir
    Path dir;

    @Test
    void theDemoIsPredictedExactlyWithItsArithmeticAndInputs() {
        CliRun r = CliRun.of("plan", "experiments/demo.yaml");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .startsWith("plan for demo (experiments/demo.yaml)\n")
                .contains("\nembedded  predicted 42,496 tokens (set by KV memory)\n")
                .contains("KV budget 8,388,608 B / 192 B per token")
                .contains("ctx-size 43,776 (target + context_pad 1,024) rounded up to 32 = 43,776 > 43,690")
                .contains("--kv-memory = 8MiB  (flag: backends[0].command)")
                .contains("--shape = micro  (default: ctxprobe serve's default)")
                // The micro shape has one layer: said in the singular.
                .contains("linear: 2 x 10,240 parameters a token (1 layer of attention 4,096 + gated MLP 6,144)")
                .contains("attention: 1 layer, causal attention")
                .doesNotContain("1 layers")
                .doesNotContain("missing:");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void thePrefillFloorIsPrintedAtEveryTargetWithWhatItAssumed() throws Exception {
        // No config on this machine: the model's name finds ctxprobe's own copy (docs/results.md, % of roofline).
        CliRun r = CliRun.of("plan", H200);

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("prefill floor (docs/results.md, % of roofline):")
                .contains("at 917,504: 4.461 s (FP8, linear+attention+indexer); 2.175 s (FP8, linear+attention);")
                .contains("devices: 8 (--tp in backends[0].command)")
                .contains("devices: 8 (--tensor-parallel-size in backends[1].command)")
                .contains("peak FP8: 1,979.0 TFLOPS a device (NVIDIA H100 SXM and H200 datasheets");
        JsonNode plan = JsonMapper.builder()
                .build()
                .readTree(CliRun.of("plan", H200, "--format", "json").out());
        JsonNode floor = plan.get("backends").get(0).get("prefill_floor");
        assertThat(floor.get("linear_flops_per_token").asDouble()).isEqualTo(26e9);
        assertThat(floor.get("devices").asInt()).isEqualTo(8);

        CliRun p800 = CliRun.of("plan", "experiments/dsv4-p800.yaml");
        assertThat(p800.out()).contains("unknown: Kunlunxin publishes no dense peak for the P800");
    }

    @Test
    void theSeedsExperimentIsConfigBoundOnBothEnginesAndNamesWhatIsMissing() throws Exception {
        CliRun r = CliRun.of("plan", H200, "--model-config", V4, "--format", "json");

        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode plan = JsonMapper.builder().build().readTree(r.out());
        for (JsonNode b : plan.get("backends")) {
            assertThat(b.get("target").asLong()).as(b.get("backend").asString()).isEqualTo(1_047_552);
            assertThat(b.get("bound").asString()).isEqualTo("model_config");
            assertThat(b.get("summary").asString()).contains("max_position_embeddings");
            // The checkpoint's size is in no file next to the config and detection cannot know it.
            assertThat(b.get("missing").findValuesAsString("name")).contains("weights");
            assertThat(b.get("inputs").findValuesAsString("where")).contains("--model-config");
        }
        assertThat(plan.get("warnings").findValuesAsString("path")).containsOnly("sweep.targets[8]");
    }

    @Test
    void missingInputsAreNamedAndTheConfigBoundIsStillPrinted() {
        CliRun r = CliRun.of("plan", H200, "--model-config", V4);

        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("\nsglang  predicted 1,047,552 tokens (set by the model config)\n")
                .contains("\nvllm    predicted 1,047,552 tokens (set by the model config)\n")
                .contains("  missing:\n")
                .contains("    weights: no model.safetensors.index.json with metadata.total_size");
    }

    /** The seeds' experiment without the config shipped beside it, as a file of the user's own. */
    private Path withoutShippedConfig() throws Exception {
        Path file = dir.resolve("h200-own.yaml");
        String yaml = Files.readString(Path.of(H200));
        assertThat(yaml).contains("\nmodel_config: models/deepseek-v4-flash.config.json\n");
        Files.writeString(file, yaml.replace("\nmodel_config: models/deepseek-v4-flash.config.json\n", "\n"));
        return file;
    }

    @Test
    void withoutAnyModelConfigTheMissingConfigIsNamed() throws Exception {
        CliRun r = CliRun.of("plan", withoutShippedConfig().toString(), "--format", "md");

        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .startsWith("# Plan: dsv4_h200_max_context_length\n")
                .contains("**model config**: no config.json in the model folder '/data/models/DeepSeek-V4-Flash'");
    }

    @Test
    void fromAPlainCloneTheSeedsExperimentPredictsBothBackendsAndWarnsAboutItsLastTarget() {
        CliRun r = CliRun.of("plan", H200);

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("\nsglang  predicted 1,047,552 tokens (set by the model config)\n")
                .contains("\nvllm    predicted 1,047,552 tokens (set by the model config)\n")
                .contains("model config = " + Path.of(V4).toAbsolutePath() + "  (experiment: model_config)")
                .contains("  sglang: sweep.targets[8]: target 1,048,576 cannot be served by sglang whatever the memory")
                .contains("  vllm: sweep.targets[8]: target 1,048,576 cannot be served by vllm whatever the memory")
                // hardware.name '8x NVIDIA H200 143GB': 143 x 1,000 MiB, as ctxprobe writes names.
                .contains("memory per device = 139.65 GiB (at least 143,000 MiB: the name's GB are MiB / 1000)"
                        + "  (experiment: hardware.name '8x NVIDIA H200 143GB')")
                .contains("vLLM's API-server default for a device of 139.65 GiB (8192 for 70 GiB or more, else 2048)")
                .doesNotContain("memory per device: neither declared");
        assertThat(CliRun.of("plan", "experiments/dsv4-p800.yaml").out())
                .contains("\nsglang  predicted 1,047,552 tokens (set by the model config)\n");
    }

    @Test
    void whenNothingIsKnownThePlanShowsNoCheckAtASmallTargetAndValidateSaysTheModelLimitWasNotChecked()
            throws Exception {
        Path own = withoutShippedConfig();
        Path bare = dir.resolve("bare.yaml");
        Files.writeString(bare, Files.readString(own).replace("  name: 8x NVIDIA H200 143GB\n", ""));

        CliRun plan = CliRun.of("plan", bare.toString());
        assertThat(plan.exitCode()).as(plan.err()).isZero();
        assertThat(plan.out())
                .contains("\nvllm    no prediction (nothing known)\n")
                .doesNotContain("at target 256:");
        // On a machine without accelerators (CI's) nothing tells the memory; where one is detected it is named.
        CliRun configOnly = CliRun.of("plan", bare.toString(), "--model-config", V4);
        assertThat(configOnly.out()).doesNotContain("a device of unknown");
        assertThat(configOnly.out())
                .containsAnyOf(
                        "--max-num-batched-tokens = 8192  (default: vLLM's API-server default (8192 for a device of"
                                + " 70 GiB or more, else 2048; the device's memory is not known, 8192 assumed))",
                        "vLLM's API-server default for a device of ");

        CliRun validate = CliRun.of("validate", own.toString());
        assertThat(validate.exitCode()).as(validate.err()).isZero();
        assertThat(validate.out())
                .contains("note: the targets were not checked against the model's own limit for sglang, vllm: no"
                        + " model config (give 'model_config: PATH' in the experiment, or --model-config)");
        assertThat(CliRun.of("validate", H200).out()).doesNotContain("were not checked against the model's own limit");
    }

    @Test
    void aPredictionAboveFrontierMaxIsNotCalledThePredictedFrontier() throws Exception {
        Path file = dir.resolve("demo-low-max.yaml");
        String demo = Files.readString(Path.of("experiments/demo.yaml"));
        assertThat(demo).contains("max: 65536");
        Files.writeString(file, demo.replace("max: 65536", "max: 16384"));

        for (CliRun r :
                new CliRun[] {CliRun.of("validate", file.toString()), CliRun.of("run", "--dry-run", file.toString())}) {
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out())
                    .contains("  target 16384 first: the plan predicts 42496 (KV memory; ctxprobe plan shows why),"
                            + " above frontier.max 16384; the prediction cannot be measured by this search\n")
                    .doesNotContain("is the predicted frontier");
        }
    }

    @Test
    void deepSeekV32HoldsItsOwnLimitTheSameWay() {
        CliRun r = CliRun.of("plan", H200, "--model-config", V32, "--weights-gib", "642", "--memory-gib", "140");

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("\nsglang  predicted 162,816 tokens (set by the model config)\n")
                .contains("\nvllm    predicted 162,816 tokens (set by the model config)\n")
                .contains("weights = 642.00 GiB  (flag: --weights-gib)")
                .contains("memory per device = 140.00 GiB  (flag: --memory-gib)");
    }

    @Test
    void validateWarnsAboutTheSeedsLastTargetAboveTheModelsLimit() {
        CliRun r = CliRun.of("validate", H200, "--model-config", V4);

        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("warning: sweep.targets[8]: target 1,048,576 cannot be served by sglang whatever the memory")
                .contains("warning: sweep.targets[8]: target 1,048,576 cannot be served by vllm whatever the memory")
                .contains("1,049,600")
                .contains("the largest target the model allows is 1,047,552");
        assertThat(CliRun.of("validate", H200, "--model-config", V32).out())
                .contains("the largest target the model allows is 162,816");
    }

    @Test
    void validateAndDryRunShowTheSearchStartingAtThePrediction() {
        CliRun validate = CliRun.of("validate", "experiments/demo.yaml");
        CliRun dry = CliRun.of("run", "--dry-run");

        for (CliRun r : new CliRun[] {validate, dry}) {
            assertThat(r.exitCode()).isZero();
            assertThat(r.out())
                    .contains("  target 42496  max_model_len 43520\n")
                    .contains("  target 42496 is the predicted frontier (KV memory; ctxprobe plan shows why),"
                            + " then one align above it\n")
                    .doesNotContain("target 65536");
        }
    }

    @Test
    void startMaxKeepsTheSearchAtMax() throws Exception {
        Path file = dir.resolve("demo-max.yaml");
        Files.writeString(
                file,
                Files.readString(Path.of("experiments/demo.yaml"))
                        .replace("max_launches: 8}", "max_launches: 8, start: max}"));

        CliRun r = CliRun.of("validate", file.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("  target 65536  max_model_len 66560\n")
                .contains("the search starts at max (sweep.frontier.start: max)")
                .doesNotContain("target 42496");
    }

    @Test
    void withoutAPredictionValidateSaysWhyTheSearchStartsAtMax() throws Exception {
        Path file = dir.resolve("unknown.yaml");
        Files.writeString(file, """
                experiment: unknown
                model: /not/here
                sweep:
                  strategy: frontier
                  frontier: {min: 4096, max: 65536}
                backends:
                  - name: vllm
                    engine: vllm
                    command: vllm serve {model} --max-model-len {max_model_len} --port {port}
                """);

        CliRun r = CliRun.of("validate", file.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("  target 65536  max_model_len 66560\n")
                .contains("  no frontier predicted (no limit is known from the inputs there are (missing: model config")
                .contains("): the search starts at max\n");
    }

    @Test
    void badInputIsOneSentenceAndExitCode2() throws Exception {
        CliRun format = CliRun.of("plan", "experiments/demo.yaml", "--format", "xml");
        assertThat(format.exitCode()).isEqualTo(2);
        assertThat(format.err()).contains("--format is text, md or json, not 'xml'");

        CliRun weights = CliRun.of("plan", H200, "--weights-gib", "-3");
        assertThat(weights.exitCode()).isEqualTo(2);
        assertThat(weights.err().strip())
                .isEqualTo("ctxprobe: --weights-gib is the size of the weights in GiB, 0 or"
                        + " more, e.g. --weights-gib 152.5");

        CliRun config = CliRun.of(
                "plan", H200, "--model-config", dir.resolve("none.json").toString());
        assertThat(config.exitCode()).isEqualTo(2);
        assertThat(config.err()).contains("is no file: give the path of the model's config.json");

        CliRun devices = CliRun.of("validate", H200, "--devices", "0");
        assertThat(devices.exitCode()).isEqualTo(2);
        assertThat(devices.err()).contains("--devices is the number of accelerators");

        CliRun missing = CliRun.of("plan", dir.resolve("nope.yaml").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("no such file");

        Path bad = dir.resolve("bad.yaml");
        Files.writeString(
                bad,
                Files.readString(Path.of("experiments/demo.yaml"))
                        .replace("max_launches: 8}", "max_launches: 8, start: middle}"));
        CliRun start = CliRun.of("plan", bad.toString());
        assertThat(start.exitCode()).isEqualTo(2);
        assertThat(start.err()).contains("sweep.frontier.start is 'plan' (begin at the predicted frontier) or 'max'");
        for (CliRun r : new CliRun[] {format, weights, config, devices, missing, start}) {
            assertThat(r.err()).doesNotContain("Exception").doesNotContain("\tat ");
        }
    }
}
