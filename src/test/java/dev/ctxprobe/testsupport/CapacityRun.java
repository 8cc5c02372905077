package dev.ctxprobe.testsupport;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The experiment behind the report's capacity-run fixture (docs/search.md#the-capacity-map): the test engine as a
 * vLLM-like and an SGLang-like backend, each with a shared KV pool that admits a request when its prompt and output
 * fit and queues it otherwise, searched at 1, 2 and 4 requests at once. Every level's answer follows from the pools'
 * arithmetic ({@code pool / N - output_len}, aligned down), so the steps are the same on any machine; only the
 * timings differ. The machine is declared, so the prediction beside each answer reads nothing of this one.
 */
public final class CapacityRun {
    /** The experiment's name, its run folder's parent. */
    public static final String NAME = "capacity_map";

    private CapacityRun() {}

    /** Writes the experiment into {@code dir} and returns the file. */
    public static Path write(Path dir) throws IOException {
        String engine = "{java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --port {port} --max-model-len {max_model_len}";
        String yaml = """
                experiment: %s
                description: "the test engine as vLLM and SGLang with a shared KV pool: how long at 1, 2, 4 at once?"
                model: test-model
                hardware: {name: test engine on CPU, accelerator: none, chip: cpu, devices: 1, memory_gib: 16}
                context_pad: 256
                vars:
                  java: '%s'
                  cp: '%s'
                load: {output_len: 16, num_prompts: 1, max_concurrency: 1, warmup: 0}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 16384, precision: 0.02, align: 256, max_launches: 8}
                  concurrency: [1, 2, 4]
                timeouts: {startup_s: 30, request_s: 60, shutdown_s: 5}
                backends:
                  - name: vllm
                    engine: vllm
                    command: >-
                      %s --capacity 8192 --kv-pool 8192 --itl-ms 2 --prefill-us-per-token 20
                  - name: sglang
                    engine: sglang
                    command: >-
                      %s --mode sglang --capacity 6144 --kv-pool 6144 --itl-ms 2 --prefill-us-per-token 20
                """.formatted(NAME, TestEngines.javaBin(), TestEngines.classpath(), engine, engine);
        Path file = dir.resolve(NAME + ".yaml");
        Files.writeString(file, yaml);
        return file;
    }
}
