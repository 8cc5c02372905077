package dev.ctxprobe.run;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ExperimentLoader;
import dev.ctxprobe.launch.Launchers;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Experiment files as this ctxprobe reads them: the loader knows its engine profiles and launcher kinds; without a
 * file, the built-in demo.
 */
public final class Experiments {
    /** How the built-in demo is named in results and messages. */
    public static final Path DEMO = Path.of("experiments/demo.yaml");

    private Experiments() {}

    /** A loader that accepts this ctxprobe's engines and launchers. */
    public static ExperimentLoader loader() {
        Set<String> selfSizing = Engines.names().stream()
                .filter(n -> Engines.profile(n).autoLength() != null)
                .collect(Collectors.toSet());
        Set<String> tokenizing = Engines.names().stream()
                .filter(n -> Engines.profile(n).tokenizer() != null)
                .collect(Collectors.toSet());
        return new ExperimentLoader(Engines.names(), selfSizing, tokenizing, new ExperimentLoader.LauncherKinds() {
            @Override
            public List<String> kinds() {
                return Launchers.kinds();
            }

            @Override
            public Map<String, String> check(String kind, Map<String, Object> options) {
                return Launchers.provider(kind).check(options);
            }

            @Override
            public Set<String> placeholders(String kind) {
                return Launchers.provider(kind).placeholders();
            }
        });
    }

    /** The experiment in {@code file}, or the built-in demo when {@code file} is null. */
    public static Experiment load(Path file) throws ExperimentError {
        if (file != null) {
            return loader().load(file);
        }
        return loader().parse(DEMO, demoText());
    }

    /** The text of the file, or of the built-in demo: what a run keeps a copy of for {@code --resume}. */
    public static String text(Path file) throws IOException {
        return file == null ? demoText() : Files.readString(file, StandardCharsets.UTF_8);
    }

    static String demoText() {
        try (InputStream in = Experiments.class.getResourceAsStream("/experiments/demo.yaml")) {
            if (in == null) {
                throw new IllegalStateException("the built-in demo experiment is missing from the ctxprobe jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the built-in demo experiment: " + e.getMessage(), e);
        }
    }
}
