package dev.ctxprobe.cli;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Experiment files whose backends are the test engine, started as a real process by the real launcher. */
final class TestExperiments {
    private TestExperiments() {}

    /**
     * Writes an experiment with one backend per {@code engineArgs} entry ("name|engine|test engine args").
     *
     * @param sweep the YAML of the sweep section's body, indented by four spaces
     */
    static Path write(Path dir, String name, String sweep, String load, String... backends) throws IOException {
        StringBuilder y = new StringBuilder();
        y.append("experiment: ").append(name).append('\n');
        y.append("model: test-model\n");
        y.append("context_pad: 100\n");
        y.append("vars:\n");
        y.append("  java: '").append(TestEngines.javaBin()).append("'\n");
        y.append("  cp: '").append(TestEngines.classpath()).append("'\n");
        y.append("load:\n").append(load);
        y.append("sweep:\n").append(sweep);
        y.append("timeouts: {startup_s: 20, request_s: 5, shutdown_s: 3}\n");
        y.append("backends:\n");
        for (String b : backends) {
            String[] parts = b.split("\\|", 3);
            y.append("  - name: ").append(parts[0]).append('\n');
            y.append("    engine: ").append(parts[1]).append('\n');
            y.append("    command: >-\n");
            y.append(
                            "      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine")
                    .append(" --port {port} --max-model-len {max_model_len} ")
                    .append(parts[2])
                    .append('\n');
        }
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y);
        return file;
    }
}
