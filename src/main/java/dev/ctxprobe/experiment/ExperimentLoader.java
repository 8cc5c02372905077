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
import org.snakeyaml.engine.v2.api.LoadSettings;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Reads an experiment file (YAML, or JSON which is YAML too) into an {@link Experiment}: unknown keys, wrong
 * types and impossible values are refused with file:line:column and a sentence saying what to write instead.
 */
public final class ExperimentLoader {
    /** Placeholders every command may use besides the experiment's vars. */
    public static final Set<String> BUILT_IN_PLACEHOLDERS =
            Set.of("model", "target_len", "max_model_len", "host", "port");

    /**
     * The largest experiment file read (docs/experiment-file.md#how-large-a-file-may-be): real ones are a few KiB; a larger file is
     * refused by its size before a byte of it is parsed.
     */
    public static final long MAX_FILE_BYTES = 4L << 20;

    /** The longest single value (a command, a description), in characters: the parser's own limit refuses more. */
    public static final int MAX_STRING_CHARS = 1 << 20;

    /**
     * The longest line, in characters. The YAML scanner spends seconds and hundreds of MiB on one line of a few MiB
     * (docs/experiment-file.md#how-large-a-file-may-be), so such a line is refused before it is parsed; a long value spread over
     * lines (a block scalar) meets {@link #MAX_STRING_CHARS} instead.
     */
    public static final int MAX_LINE_CHARS = 64 << 10;

    private static final YAMLMapper MAPPER = YAMLMapper.builder(YAMLFactory.builder()
                    .loadSettings(LoadSettings.builder()
                            .setCodePointLimit((int) MAX_FILE_BYTES)
                            .build())
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(MAX_STRING_CHARS)
                            .build())
                    .build())
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
    private final Set<String> enginesWithTokenizer;
    private final LauncherKinds launchers;
    private final Map<String, String> environment;

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
        this(knownEngines, enginesThatSizeThemselves, Set.of(), launchers);
    }

    /**
     * @param enginesWithTokenizer engines whose server tokenizes text ({@code POST /tokenize}), for {@code check:
     *     passkey}
     */
    public ExperimentLoader(
            Set<String> knownEngines,
            Set<String> enginesThatSizeThemselves,
            Set<String> enginesWithTokenizer,
            LauncherKinds launchers) {
        this(knownEngines, enginesThatSizeThemselves, enginesWithTokenizer, launchers, System.getenv());
    }

    private ExperimentLoader(
            Set<String> knownEngines,
            Set<String> enginesThatSizeThemselves,
            Set<String> enginesWithTokenizer,
            LauncherKinds launchers,
            Map<String, String> environment) {
        this.knownEngines = new TreeSet<>(knownEngines);
        this.enginesThatSizeThemselves = Set.copyOf(enginesThatSizeThemselves);
        this.enginesWithTokenizer = Set.copyOf(enginesWithTokenizer);
        this.launchers = launchers;
        this.environment = Map.copyOf(environment);
    }

    /** This loader taking the values of {@code {env:NAME}} placeholders from {@code environment}. */
    public ExperimentLoader withEnvironment(Map<String, String> environment) {
        return new ExperimentLoader(
                knownEngines, enginesThatSizeThemselves, enginesWithTokenizer, launchers, environment);
    }

    /** Loads and checks one file. */
    public Experiment load(Path file) throws ExperimentError {
        if (Files.isDirectory(file)) {
            throw new ExperimentError(file, 0, 0, folderInstead(file));
        }
        String text;
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw new ExperimentError(file, 0, 0, tooLarge(size));
            }
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

    /** The sentence for a file over {@link #MAX_FILE_BYTES}. */
    public static String tooLarge(long size) {
        return "the file is " + String.format(java.util.Locale.ROOT, "%,d", size) + " bytes; an experiment file is at"
                + " most " + (MAX_FILE_BYTES >> 20) + " MiB (a real one is a few KiB): give the experiment file, not"
                + " a data file";
    }

    /** Checks text as if it were the content of {@code file}. */
    public Experiment parse(Path file, String text) throws ExperimentError {
        if (text.length() > MAX_FILE_BYTES) {
            throw new ExperimentError(file, 0, 0, tooLarge(text.length()));
        }
        int line = 1;
        int start = 0;
        for (int i = 0; i <= text.length(); i++) {
            if (i == text.length() || text.charAt(i) == '\n') {
                if (i - start > MAX_LINE_CHARS) {
                    throw new ExperimentError(
                            file,
                            line,
                            MAX_LINE_CHARS + 1,
                            "this line is " + String.format(java.util.Locale.ROOT, "%,d", i - start)
                                    + " characters long; a line of an experiment file holds at most "
                                    + String.format(java.util.Locale.ROOT, "%,d", MAX_LINE_CHARS)
                                    + ": write a long value over several lines (a '|' block) or shorten it");
                }
                line++;
                start = i + 1;
            }
        }
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
        BackendChecks backends = new BackendChecks(
                values, knownEngines, enginesThatSizeThemselves, enginesWithTokenizer, launchers, environment);
        return new ExperimentChecks(values, backends).check(raw);
    }
}
