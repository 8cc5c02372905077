package dev.ctxprobe.testsupport;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The experiment behind the report's sample run: the test engine as two backends on a frontier search, each ending
 * on a refusal the way its engine refuses. vLLM-like refuses to start above its KV capacity and names it
 * ({@code kv_insufficient}, two launches to the bracket after the curve); SGLang-like starts and rejects a prompt
 * above its context in a 200 stream ({@code request_rejected}). Every decision follows from the engines' limits,
 * so the steps are the same on any machine; only the timings differ. The machine is declared, so the prediction
 * recorded beside each answer reads nothing of the machine it runs on either.
 */
public final class SampleRun {
    /** The experiment's name, its run folder's parent. */
    public static final String NAME = "sample_frontier";

    private SampleRun() {}

    /** Writes the experiment into {@code dir} and returns the file. */
    public static Path write(Path dir) throws IOException {
        String engine = "{java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --port {port} --max-model-len {max_model_len}";
        String yaml = """
                experiment: %s
                description: "the test engine as vLLM and SGLang: where does the context stop fitting?"
                model: test-model
                hardware: {name: test engine on CPU, accelerator: none, chip: cpu, devices: 1, memory_gib: 16}
                context_pad: 256
                vars:
                  java: '%s'
                  cp: '%s'
                load: {output_len: 1, num_prompts: 2, max_concurrency: 1, request_rate: 10000, warmup: 1}
                sweep:
                  strategy: frontier
                  frontier: {min: 2048, max: 16384, precision: 0.01, align: 256, max_launches: 8}
                  curve: [4096, 8192]
                timeouts: {startup_s: 30, request_s: 10, shutdown_s: 5}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      %s --capacity 12512 --prefill-us-per-token 40
                  - name: sglang
                    engine: sglang
                    command: >-
                      %s --mode sglang --capacity 14000 --prefill-us-per-token 40
                """.formatted(NAME, TestEngines.javaBin(), TestEngines.classpath(), engine, engine);
        Path file = dir.resolve(NAME + ".yaml");
        Files.writeString(file, yaml);
        return file;
    }
}
