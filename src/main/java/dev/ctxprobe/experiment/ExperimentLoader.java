package dev.ctxprobe.experiment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Reads an experiment file (YAML, or JSON which is YAML too) into an {@link Experiment}: unknown keys, wrong
 * types and impossible values are refused with file:line:column and a sentence saying what to write instead.
 */
public final class ExperimentLoader {
    /** Placeholders every command may use besides the experiment's vars. */
    public static final Set<String> BUILT_IN_PLACEHOLDERS =
            Set.of("model", "target_len", "max_model_len", "host", "port");

    private static final YAMLMapper MAPPER = YAMLMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            // "8" where a number belongs is a wrong type, not something to guess about
            // (docs/experiment-file.md#errors).
            .withCoercionConfig(LogicalType.Integer, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Float, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .build();

    /** The launcher kinds a file may name and the check of each kind's own options. */
    public interface LauncherKinds {
        /** The kinds, the default first. */
        List<String> kinds();

        /** Problems of the options given to {@code kind}, one sentence per option name ("" for the whole). */
        Map<String, String> check(String kind, Map<String, Object> options);

        /** Placeholders {@code kind} fills in itself at launch (per node), which a command may use. */
        default Set<String> placeholders(String kind) {
            return Set.of();
        }
    }

    /** The kinds without options: {@code local}, the default, and {@code external}. */
    public static final LauncherKinds LOCAL_ONLY = new LauncherKinds() {
        @Override
        public List<String> kinds() {
            return List.of("local", Defaults.EXTERNAL_LAUNCHER);
        }

        @Override
        public Map<String, String> check(String kind, Map<String, Object> options) {
            Map<String, String> problems = new LinkedHashMap<>();
            options.keySet()
                    .forEach(k -> problems.put(k, "the " + kind + " launcher takes no options; remove '" + k + "'"));
            return problems;
        }
    };

    private final Set<String> knownEngines;
    private final Set<String> enginesThatSizeThemselves;
    private final LauncherKinds launchers;

    /**
     * @param knownEngines the engine profile names a backend may name
     * @param launchers the launcher kinds a file may name
     */
    public ExperimentLoader(Set<String> knownEngines, LauncherKinds launchers) {
        this(knownEngines, Set.of(), launchers);
    }

    /**
     * @param enginesThatSizeThemselves engines that accept an automatic context length, for {@code auto_first}
     */
    public ExperimentLoader(Set<String> knownEngines, Set<String> enginesThatSizeThemselves, LauncherKinds launchers) {
        this.knownEngines = new TreeSet<>(knownEngines);
        this.enginesThatSizeThemselves = Set.copyOf(enginesThatSizeThemselves);
        this.launchers = launchers;
    }

    /** Loads and checks one file. */
    public Experiment load(Path file) throws ExperimentError {
        if (Files.isDirectory(file)) {
            throw new ExperimentError(file, 0, 0, folderInstead(file));
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new ExperimentError(
                    file, 0, 0, "no such file: give the path of an experiment file (see experiments/)");
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new ExperimentError(file, 0, 0, "this is not a text file in UTF-8: give a YAML experiment file");
        } catch (IOException e) {
            throw new ExperimentError(
                    file, 0, 0, "cannot read the experiment file (" + FileReason.of(e) + "); check its permissions");
        }
        return parse(file, text);
    }

    private static String folderInstead(Path dir) {
        List<String> yaml = new ArrayList<>();
        try (var files = Files.list(dir)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") || n.endsWith(".yml"))
                    .sorted()
                    .forEach(yaml::add);
        } catch (IOException | java.io.UncheckedIOException unreadable) {
            // Without a listing the sentence still says what to give.
        }
        if (yaml.isEmpty()) {
            return "this is a folder: give the path of an experiment file (see experiments/)";
        }
        return "this is a folder: give one of its experiment files, e.g. " + dir.resolve(yaml.getFirst())
                + (yaml.size() > 1 ? " (it holds " + String.join(", ", yaml) + ")" : "");
    }

    /** Checks text as if it were the content of {@code file}. */
    public Experiment parse(Path file, String text) throws ExperimentError {
        SourceMap where;
        try {
            where = SourceMap.of(MAPPER, text);
        } catch (JacksonException e) {
            throw YamlErrors.translate(file, e, null, text);
        }
        YamlScalars.check(file, MAPPER, text);
        ExperimentFile raw;
        try {
            raw = MAPPER.readValue(text, ExperimentFile.class);
        } catch (JacksonException e) {
            throw YamlErrors.translate(file, e, where, text);
        }
        if (raw == null) {
            throw new ExperimentError(file, 0, 0, "the file is empty: start from experiments/demo.yaml");
        }
        ValueChecks values = new ValueChecks(file, where);
        BackendChecks backends = new BackendChecks(values, knownEngines, enginesThatSizeThemselves, launchers);
        return new ExperimentChecks(values, backends).check(raw);
    }
}
