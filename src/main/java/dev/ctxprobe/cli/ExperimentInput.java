package dev.ctxprobe.cli;

import dev.ctxprobe.engine.EngineProfiles;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ExperimentLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;

/** Reads experiment files for the commands, including the built-in demo that {@code run} uses without a file. */
final class ExperimentInput {
    /** How the built-in demo is named in results and messages. */
    static final Path DEMO = Path.of("experiments/demo.yaml");

    private ExperimentInput() {}

    static ExperimentLoader loader() {
        Set<String> withoutLaunch = EngineProfiles.names().stream()
                .filter(n -> !EngineProfiles.get(n).launchesServer())
                .collect(Collectors.toSet());
        return new ExperimentLoader(EngineProfiles.names(), withoutLaunch);
    }

    /** The experiment in {@code file}, or the built-in demo when {@code file} is null. */
    static Experiment load(Path file) throws ExperimentError {
        if (file != null) {
            return loader().load(file);
        }
        return loader().parse(DEMO, demoText());
    }

    /** The text of the file, or of the built-in demo; what a run keeps a copy of for {@code --resume}. */
    static String text(Path file) throws IOException {
        return file == null ? demoText() : Files.readString(file, StandardCharsets.UTF_8);
    }

    static String demoText() {
        try (InputStream in = ExperimentInput.class.getResourceAsStream("/experiments/demo.yaml")) {
            if (in == null) {
                throw new IllegalStateException("the built-in demo experiment is missing from the ctxprobe jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the built-in demo experiment: " + e.getMessage(), e);
        }
    }
}
