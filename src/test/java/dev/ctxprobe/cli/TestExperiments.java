package dev.ctxprobe.cli;

import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Experiment files whose backends are the test engine, started as a real process by the real launcher. */
final class TestExperiments {
    private TestExperiments() {}

    /** One test-engine backend: its name, engine profile, a fixed port or null for a free one, and its arguments. */
    record Backend(String name, String engine, Integer port, String engineArgs) {}

    /**
     * Writes an experiment with one backend per {@code backends} entry ("name|engine|test engine args").
     *
     * @param sweep the YAML of the sweep section's body, indented by two spaces
     * @param load the YAML of the load section's body, indented by two spaces
     */
    static Path write(Path dir, String name, String sweep, String load, String... backends) throws IOException {
        List<Backend> parsed = java.util.Arrays.stream(backends)
                .map(b -> b.split("\\|", 3))
                .map(p -> new Backend(p[0], p[1], null, p[2]))
                .toList();
        return write(dir, name, sweep, load, "{startup_s: 20, request_s: 5, shutdown_s: 3}", parsed);
    }

    /** Writes an experiment; {@code timeouts} is the flow-style YAML of the timeouts section. */
    static Path write(Path dir, String name, String sweep, String load, String timeouts, List<Backend> backends)
            throws IOException {
        return write(dir, name, sweep, load, timeouts, "", backends);
    }

    /** As {@link #write(Path, String, String, String, String, List)}, with more top-level YAML ({@code extra}). */
    static Path write(
            Path dir, String name, String sweep, String load, String timeouts, String extra, List<Backend> backends)
            throws IOException {
        StringBuilder y = new StringBuilder();
        y.append(extra);
        y.append("experiment: ").append(name).append('\n');
        y.append("model: test-model\n");
        y.append("context_pad: 100\n");
        y.append("vars:\n");
        y.append("  java: '").append(TestEngines.javaBin()).append("'\n");
        y.append("  cp: '").append(TestEngines.classpath()).append("'\n");
        y.append("load:\n").append(load);
        y.append("sweep:\n").append(sweep);
        y.append("timeouts: ").append(timeouts).append('\n');
        y.append("backends:\n");
        for (Backend b : backends) {
            y.append("  - name: ").append(b.name()).append('\n');
            y.append("    engine: ").append(b.engine()).append('\n');
            if (b.port() != null) {
                y.append("    port: ").append(b.port()).append('\n');
            }
            y.append("    command: >-\n");
            y.append(
                            "      {java} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp {cp} dev.ctxprobe.testengine.TestEngine")
                    .append(" --port {port} --max-model-len {max_model_len} ")
                    .append(b.engineArgs())
                    .append('\n');
        }
        Path file = dir.resolve(name + ".yaml");
        Files.writeString(file, y);
        return file;
    }
}
