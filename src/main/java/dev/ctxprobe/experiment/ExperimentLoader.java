package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.Experiment.Frontier;
import dev.ctxprobe.experiment.Experiment.HardwareSpec;
import dev.ctxprobe.experiment.Experiment.IdRange;
import dev.ctxprobe.experiment.Experiment.Load;
import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.experiment.Experiment.Strategy;
import dev.ctxprobe.experiment.Experiment.Sweep;
import dev.ctxprobe.experiment.Experiment.Timeouts;
import dev.ctxprobe.experiment.ExperimentFile.BackendFile;
import dev.ctxprobe.experiment.ExperimentFile.LoadFile;
import dev.ctxprobe.experiment.ExperimentFile.SweepFile;
import dev.ctxprobe.experiment.ExperimentFile.TimeoutsFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
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

    /** Keys ctxprobe writes in the results' {@code config} beside the vars; a var must not overwrite them. */
    static final Set<String> RESERVED_CONFIG_KEYS = Set.of(
            "output_len",
            "num_prompts",
            "max_concurrency",
            "request_rate",
            "context_pad",
            "warmup",
            "strategy",
            "restart",
            "targets",
            "curve",
            "frontier",
            "timeouts",
            "verify",
            "backend_vars");

    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final long MAX_LENGTH = Defaults.MAX_MODEL_LEN;
    private static final long MAX_OUTPUT_LEN = 1 << 20;
    private static final long MAX_PROMPTS = 100_000;
    private static final long MAX_CONCURRENCY = 10_000;
    private static final long MAX_WARMUP = 1_000;
    private static final double MAX_RATE = 1_000_000;
    private static final long MAX_LAUNCHES = 1_000;
    private static final long MAX_DEVICES = 4_096;
    private static final long MAX_GIB = 1 << 20;
    private static final Duration MAX_WAIT = Duration.ofDays(7);

    private static final YAMLMapper MAPPER = YAMLMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            // "8" where a number belongs is a wrong type (spec 02), not something to guess about.
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

    /** Only the default kind, {@code local}, which takes no options. */
    public static final LauncherKinds LOCAL_ONLY = new LauncherKinds() {
        @Override
        public List<String> kinds() {
            return List.of("local");
        }

        @Override
        public Map<String, String> check(String kind, Map<String, Object> options) {
            Map<String, String> problems = new LinkedHashMap<>();
            options.keySet().forEach(k -> problems.put(k, "the local launcher takes no options; remove '" + k + "'"));
            return problems;
        }
    };

    private final Set<String> knownEngines;
    private final Set<String> enginesWithoutLaunch;
    private final Set<String> enginesThatSizeThemselves;
    private final LauncherKinds launchers;

    /**
     * @param knownEngines the engine profile names a backend may name
     * @param enginesWithoutLaunch engines that talk to an already-running endpoint and need no command
     * @param launchers the launcher kinds a file may name
     */
    public ExperimentLoader(Set<String> knownEngines, Set<String> enginesWithoutLaunch, LauncherKinds launchers) {
        this(knownEngines, enginesWithoutLaunch, Set.of(), launchers);
    }

    /**
     * @param enginesThatSizeThemselves engines that accept an automatic context length, for {@code auto_first}
     */
    public ExperimentLoader(
            Set<String> knownEngines,
            Set<String> enginesWithoutLaunch,
            Set<String> enginesThatSizeThemselves,
            LauncherKinds launchers) {
        this.knownEngines = new TreeSet<>(knownEngines);
        this.enginesWithoutLaunch = Set.copyOf(enginesWithoutLaunch);
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
            throw translate(file, e, null, text);
        }
        YamlScalars.check(file, MAPPER, text);
        ExperimentFile raw;
        try {
            raw = MAPPER.readValue(text, ExperimentFile.class);
        } catch (JacksonException e) {
            throw translate(file, e, where, text);
        }
        if (raw == null) {
            throw new ExperimentError(file, 0, 0, "the file is empty: start from experiments/demo.yaml");
        }
        return new Checker(file, where).check(raw);
    }

    private static ExperimentError translate(Path file, JacksonException e, SourceMap where, String text) {
        TokenStreamLocation loc = e.getLocation();
        int line = loc == null ? 0 : loc.getLineNr();
        int col = loc == null ? 0 : loc.getColumnNr();
        String path = pathOf(e);
        if (where != null && (line <= 0 || e instanceof UnrecognizedPropertyException)) {
            // The YAML binder does not always know where it was; the source map does, down to the key.
            SourceMap.Position p = e instanceof UnrecognizedPropertyException ? where.keyOf(path) : where.at(path);
            line = p.line();
            col = p.column();
        }
        if (e instanceof UnrecognizedPropertyException u) {
            String known = u.getKnownPropertyIds() == null
                    ? ""
                    : u.getKnownPropertyIds().stream()
                            .map(String::valueOf)
                            .map(ExperimentLoader::snake)
                            .sorted()
                            .collect(Collectors.joining(", "));
            String inside = path.contains(".") ? " in '" + path.substring(0, path.lastIndexOf('.')) + "'" : "";
            return new ExperimentError(
                    file,
                    line,
                    col,
                    "unknown key '" + u.getPropertyName() + "'" + inside + "; the keys allowed here are: " + known);
        }
        if (e instanceof MismatchedInputException m) {
            return new ExperimentError(file, line, col, mismatch(path, m.getTargetType(), found(where, path)));
        }
        if (e instanceof DatabindException) {
            return new ExperimentError(file, line, col, "'" + path + "' cannot be read: " + plain(e));
        }
        if (e instanceof tools.jackson.core.exc.InputCoercionException c) {
            long limit = c.getTargetType() == Integer.class || c.getTargetType() == int.class
                    ? Integer.MAX_VALUE
                    : Long.MAX_VALUE;
            return new ExperimentError(
                    file,
                    line,
                    col,
                    "'" + path + "' is too large: write a whole number up to "
                            + String.format(Locale.ROOT, "%,d", limit));
        }
        return new ExperimentError(file, line, col, "not valid YAML: " + yamlProblem(e) + "; " + yamlHint(text, line));
    }

    /**
     * The YAML parser's own sentences without its excerpts: "expected ',' or '}', but got <stream end> (while parsing a
     * flow mapping)". Its message repeats the source with carets on indented lines; the location is given already.
     */
    private static String yamlProblem(JacksonException e) {
        List<String> said = e.getOriginalMessage() == null
                ? List.of()
                : e.getOriginalMessage()
                        .lines()
                        .filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0)))
                        .toList();
        if (said.isEmpty()) {
            return "the text cannot be read";
        }
        if (said.size() == 1) {
            return plain(said.getFirst());
        }
        return plain(said.getLast()) + " (" + plain(said.getFirst()) + ")";
    }

    // A command that starts with a placeholder is the usual mistake: YAML reads "{java} -cp" as a mapping.
    private static String yamlHint(String text, int line) {
        List<String> lines = text.lines().toList();
        for (int i = Math.max(0, line - 2); i < Math.min(lines.size(), line); i++) {
            if (lines.get(i).matches(".*:\\s*\\{[A-Za-z_]+}.*")) {
                return "a value that starts with a {placeholder} must be quoted, e.g. command: '{java} -jar x.jar'";
            }
        }
        return "check indentation and quotes";
    }

    /**
     * The sentence for a value of the wrong kind, in the file's words: what was found and what to write. Jackson's
     * own message names Java types and its coercion settings, which say nothing to the author of a YAML file.
     */
    static String mismatch(String path, Class<?> target, SourceMap.Found found) {
        String not = found == null ? "" : ", not " + found.describe();
        if (path.isEmpty()) {
            return "the file must hold keys with values (experiment:, model:, sweep:, backends:)" + not
                    + "; start from experiments/demo.yaml";
        }
        String want = target == null ? "another kind of value" : describe(target);
        if (found != null && found.quoted() && found.text() != null && looksLike(target, found.text())) {
            return "'" + path + "' must be " + want + not + ": remove the quotes";
        }
        return "'" + path + "' must be " + want + not;
    }

    private static SourceMap.Found found(SourceMap where, String path) {
        return where == null ? null : where.found(path);
    }

    private static boolean looksLike(Class<?> target, String text) {
        if (target == Integer.class || target == Long.class) {
            return text.strip().matches("-?\\d+");
        }
        if (target == Double.class) {
            return text.strip().matches("-?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");
        }
        if (target == Boolean.class) {
            return text.strip().equals("true") || text.strip().equals("false");
        }
        return false;
    }

    // Jackson's parser messages quote Java types ("out of range of `long`"); keep the first sentence without them.
    private static String plain(JacksonException e) {
        return plain(firstLine(e.getOriginalMessage()));
    }

    private static String plain(String first) {
        int type = first.indexOf(" `");
        int paren = first.indexOf(" (");
        int cut = type < 0 ? paren : paren < 0 ? type : Math.min(type, paren);
        return cut > 0 ? first.substring(0, cut) : first;
    }

    private static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }

    private static String describe(Class<?> type) {
        if (type == Integer.class || type == Long.class || type == int.class || type == long.class) {
            return "a whole number";
        }
        if (type == Double.class || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a text value";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "a mapping of keys to values";
    }

    private static String pathOf(JacksonException e) {
        StringBuilder sb = new StringBuilder();
        for (JacksonException.Reference r : e.getPath()) {
            if (r.getPropertyName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** The semantic checks, each pointing at the value it concerns. */
    private final class Checker {
        private final Path file;
        private final SourceMap where;

        Checker(Path file, SourceMap where) {
            this.file = file;
            this.where = where;
        }

        private ExperimentError error(String path, String problem) {
            SourceMap.Position p = where.at(path);
            return new ExperimentError(file, p.line(), p.column(), problem);
        }

        Experiment check(ExperimentFile raw) throws ExperimentError {
            String name = required(raw.experiment(), "experiment", "name the experiment, e.g. 'experiment: my_run'");
            if (!SAFE_NAME.matcher(name).matches()) {
                throw error(
                        "experiment",
                        "the experiment name '" + name
                                + "' becomes a folder name: use letters, digits, '.', '_' and '-'");
            }
            Map<String, String> env = checkEnv("env", raw.env());
            Map<String, Object> vars = checkVars("vars", raw.vars());
            long pad = raw.contextPad() == null ? Defaults.CONTEXT_PAD : raw.contextPad();
            if (pad < 0 || pad >= MAX_LENGTH) {
                throw error(
                        "context_pad",
                        "context_pad must be 0 or more and below " + MAX_LENGTH
                                + " (tokens added to the target for max_model_len; " + Defaults.CONTEXT_PAD
                                + " covers every engine)");
            }
            Load load = checkLoad(raw.load());
            Sweep sweep = checkSweep(raw.sweep(), pad);
            Timeouts timeouts = checkTimeouts(raw.timeouts());
            HardwareSpec hardware = checkHardware(raw.hardware());
            Map<String, Object> launcher = launcherMap("launcher", raw.launcher());
            List<Backend> backends = checkBackends(raw.backends(), env, vars, timeouts, launcher);
            checkRanges(raw, load, sweep, timeouts, backends);
            List<String> secrets = checkNames("secrets", raw.secrets(), false);
            List<String> passEnv = checkNames("pass_env", raw.passEnv(), true);
            Experiment.Limits limits = checkLimits(raw.limits());
            return new Experiment(
                    file,
                    name,
                    raw.description() == null ? "" : raw.description(),
                    raw.model() == null ? "" : raw.model(),
                    hardware,
                    env,
                    vars,
                    pad,
                    load,
                    sweep,
                    timeouts,
                    backends,
                    modelConfig("model_config", raw.modelConfig()),
                    gib("weights_gib", raw.weightsGib(), "the model's weights, e.g. 'weights_gib: 152.5'"),
                    secrets,
                    passEnv,
                    limits);
        }

        /**
         * The upper bounds of every number the file gives: beyond them a value is a typo (1e8 streams, a startup
         * limit of 1e300 s) that would exhaust memory or wait forever rather than measure anything.
         */
        private void checkRanges(ExperimentFile raw, Load load, Sweep sweep, Timeouts timeouts, List<Backend> backends)
                throws ExperimentError {
            atMost("load.output_len", load.outputLen(), MAX_OUTPUT_LEN, "tokens generated per request");
            atMost("load.num_prompts", load.numPrompts(), MAX_PROMPTS, "measured requests per step");
            atMost("load.max_concurrency", load.maxConcurrency(), MAX_CONCURRENCY, "requests in flight at once");
            atMost("load.warmup", load.warmup(), MAX_WARMUP, "unmeasured requests before each step");
            if (!Double.isInfinite(load.requestRate()) && load.requestRate() > MAX_RATE) {
                throw error(
                        "load.request_rate",
                        String.format(
                                Locale.ROOT,
                                "load.request_rate is at most %,d requests per second; write \"inf\" to send all at"
                                        + " once",
                                (long) MAX_RATE));
            }
            if (sweep.frontier() != null) {
                atMost(
                        "sweep.frontier.max_launches",
                        sweep.frontier().maxLaunches(),
                        MAX_LAUNCHES,
                        "launches per backend");
            }
            atMostSeconds("timeouts.startup_s", timeouts.startup());
            atMostSeconds("timeouts.request_s", timeouts.request());
            atMostSeconds("timeouts.shutdown_s", timeouts.shutdown());
            atMostSeconds("timeouts.queue_s", timeouts.queue());
            for (int i = 0; i < backends.size(); i++) {
                String at = "backends[" + i + "]";
                Backend b = backends.get(i);
                atMostSeconds(at + ".startup_s", b.startup());
                String problem = Hosts.problem(b.host());
                if (problem != null) {
                    throw error(at + ".host", "host: " + problem);
                }
            }
            if (raw.hardware() != null && raw.hardware().devices() != null) {
                atMost("hardware.devices", raw.hardware().devices(), MAX_DEVICES, "accelerators on the machine");
            }
            if (raw.hardware() != null) {
                atMostGib("hardware.memory_gib", raw.hardware().memoryGib());
            }
            atMostGib("weights_gib", raw.weightsGib());
            for (int i = 0; i < backends.size(); i++) {
                atMostGib("backends[" + i + "].weights_gib", backends.get(i).weightsGib());
            }
        }

        private void atMostGib(String path, Double value) throws ExperimentError {
            if (value != null && value > MAX_GIB) {
                throw error(path, String.format(Locale.ROOT, "%s is at most %,d GiB; found %s", path, MAX_GIB, value));
            }
        }

        private void atMost(String path, long value, long max, String what) throws ExperimentError {
            if (value > max) {
                throw error(
                        path, String.format(Locale.ROOT, "%s is at most %,d (%s); found %,d", path, max, what, value));
            }
        }

        private void atMostSeconds(String path, Duration value) throws ExperimentError {
            if (value.compareTo(MAX_WAIT) > 0) {
                throw error(
                        path,
                        path + " is at most " + MAX_WAIT.toSeconds()
                                + " seconds (a week); a longer wait is a typo, not a limit");
            }
        }

        // Environment variable names; with patterns, a trailing '*' stands for any rest (SLURM_*).
        private List<String> checkNames(String path, List<String> names, boolean patterns) throws ExperimentError {
            if (names == null) {
                return List.of();
            }
            for (int i = 0; i < names.size(); i++) {
                String n = names.get(i);
                String bare = patterns && n != null && n.endsWith("*") ? n.substring(0, n.length() - 1) : n;
                if (bare == null || !ENV_NAME.matcher(bare).matches()) {
                    throw error(
                            path + "[" + i + "]",
                            path + " lists environment variable names"
                                    + (patterns ? " or prefixes ending in '*' (e.g. SLURM_*)" : " (e.g. MY_API_KEY)")
                                    + ", never values; found '" + n + "'");
                }
            }
            return List.copyOf(names);
        }

        private Experiment.Limits checkLimits(ExperimentFile.LimitsFile raw) throws ExperimentError {
            if (raw == null) {
                return Experiment.Limits.DEFAULT;
            }
            Long response = raw.responseMib();
            if (response != null) {
                between("limits.response_mib", response, 1, 65_536, "MiB one response may send");
            }
            Long event = raw.eventKib();
            if (event != null) {
                between("limits.event_kib", event, 1, 1_048_576, "KiB one server-sent event may hold");
            }
            long log = raw.serverLogMib() == null ? Defaults.SERVER_LOG_MIB : raw.serverLogMib();
            between("limits.server_log_mib", log, 1, 1_048_576, "MiB one server's log keeps");
            return new Experiment.Limits(response, event, log);
        }

        private void between(String path, long value, long min, long max, String what) throws ExperimentError {
            if (value < min || value > max) {
                throw error(
                        path,
                        String.format(Locale.ROOT, "%s is %,d to %,d (%s); found %,d", path, min, max, what, value));
            }
        }

        private HardwareSpec checkHardware(ExperimentFile.HardwareFile h) throws ExperimentError {
            if (h == null) {
                return null;
            }
            if (h.devices() != null && h.devices() < 1) {
                throw error("hardware.devices", "hardware.devices is the number of accelerators, 1 or more, e.g. 8");
            }
            return new HardwareSpec(
                    h.name(),
                    h.accelerator(),
                    h.chip(),
                    h.devices(),
                    gib("hardware.memory_gib", h.memoryGib(), "the memory of one accelerator, e.g. 'memory_gib: 141'"));
        }

        private String modelConfig(String path, String value) throws ExperimentError {
            if (value != null && value.isBlank()) {
                throw error(
                        path, path + " is the path of a model's config.json, e.g. 'model_config: models/config.json'");
            }
            return value;
        }

        private Double gib(String path, Double value, String example) throws ExperimentError {
            if (value != null && !(value > 0 && Double.isFinite(value))) {
                throw error(path, path + " is a size in GiB above 0: " + example);
            }
            return value;
        }

        private String required(String value, String path, String hint) throws ExperimentError {
            if (value == null || value.isBlank()) {
                throw error(path, "'" + path + "' is missing: " + hint);
            }
            return value;
        }

        private Map<String, String> checkEnv(String path, Map<String, String> env) throws ExperimentError {
            if (env == null) {
                return Map.of();
            }
            for (Map.Entry<String, String> e : env.entrySet()) {
                if (!ENV_NAME.matcher(e.getKey()).matches()) {
                    throw error(
                            path + "." + e.getKey(),
                            "'" + e.getKey() + "' is not an environment variable name: use letters, digits and '_'");
                }
                if (e.getValue() == null) {
                    throw error(path + "." + e.getKey(), "give " + e.getKey() + " a value, e.g. \"0,1\"");
                }
            }
            return Collections.unmodifiableMap(new LinkedHashMap<>(env));
        }

        private Map<String, Object> checkVars(String path, Map<String, Object> vars) throws ExperimentError {
            if (vars == null) {
                return Map.of();
            }
            for (Map.Entry<String, Object> e : vars.entrySet()) {
                String key = e.getKey();
                if (!key.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    throw error(
                            path + "." + key,
                            "the variable name '" + key + "' cannot be a placeholder: use letters, digits and '_'");
                }
                if (BUILT_IN_PLACEHOLDERS.contains(key) || RESERVED_CONFIG_KEYS.contains(key)) {
                    throw error(
                            path + "." + key,
                            "'" + key + "' is set by ctxprobe (a placeholder or a key of the results' config) and"
                                    + " cannot be a variable: rename it");
                }
                Object v = e.getValue();
                if (!(v instanceof String || v instanceof Number || v instanceof Boolean)) {
                    throw error(
                            path + "." + key,
                            "the variable '" + key + "' must be a single text, number or boolean, not "
                                    + (v == null ? "empty" : "a list or mapping"));
                }
            }
            return Collections.unmodifiableMap(new LinkedHashMap<>(vars));
        }

        private Load checkLoad(LoadFile raw) throws ExperimentError {
            LoadFile l = raw == null ? new LoadFile(null, null, null, null, null, null) : raw;
            int outputLen = positive("load.output_len", l.outputLen(), Defaults.OUTPUT_LEN);
            int numPrompts = positive("load.num_prompts", l.numPrompts(), Defaults.NUM_PROMPTS);
            int concurrency = positive("load.max_concurrency", l.maxConcurrency(), Defaults.MAX_CONCURRENCY);
            int warmup = l.warmup() == null ? Defaults.WARMUP : l.warmup();
            if (warmup < 0) {
                throw error("load.warmup", "load.warmup must be 0 or more (unmeasured requests before each step)");
            }
            double rate = requestRate(l.requestRate());
            boolean lenient = Defaults.LENIENT_VERIFY;
            if (l.verify() != null) {
                switch (l.verify()) {
                    case "strict" -> lenient = false;
                    case "lenient" -> lenient = true;
                    default ->
                        throw error(
                                "load.verify",
                                "load.verify is 'strict' (prompt_tokens must equal the target) or 'lenient', not '"
                                        + l.verify() + "'");
                }
            }
            return new Load(outputLen, numPrompts, concurrency, rate, warmup, lenient);
        }

        private double requestRate(Object raw) throws ExperimentError {
            if (raw == null) {
                return Defaults.REQUEST_RATE;
            }
            if (raw instanceof Number n && n.doubleValue() > 0) {
                // YAML's own infinity, .inf, arrives as a number.
                return n.doubleValue();
            }
            if (raw instanceof String s
                    && (s.equalsIgnoreCase("inf") || s.equalsIgnoreCase("infinity") || s.equals(".inf"))) {
                return Double.POSITIVE_INFINITY;
            }
            throw error(
                    "load.request_rate",
                    "load.request_rate is requests per second above 0, or \"inf\" to send all at once; found '" + raw
                            + "'");
        }

        private int positive(String path, Integer value, int dflt) throws ExperimentError {
            if (value == null) {
                return dflt;
            }
            if (value <= 0) {
                throw error(path, path + " must be 1 or more, found " + value);
            }
            return value;
        }

        private Sweep checkSweep(SweepFile raw, long pad) throws ExperimentError {
            if (raw == null) {
                throw error("", "'sweep' is missing: give 'sweep: {strategy: list, targets: [4096, 8192]}'");
            }
            Strategy strategy;
            try {
                strategy = raw.strategy() == null ? Defaults.STRATEGY : Strategy.of(raw.strategy());
            } catch (IllegalArgumentException e) {
                throw error("sweep.strategy", "sweep." + e.getMessage());
            }
            Restart restart = Defaults.RESTART;
            if (raw.restart() != null) {
                switch (raw.restart()) {
                    case "per_target" -> restart = Restart.PER_TARGET;
                    case "on_failure" -> restart = Restart.ON_FAILURE;
                    default ->
                        throw error(
                                "sweep.restart",
                                "sweep.restart is 'per_target' (a server per target, as the seeds) or 'on_failure'"
                                        + " (reuse a live server), not '" + raw.restart() + "'");
                }
            }
            List<Long> targets = raw.targets() == null ? List.of() : List.copyOf(raw.targets());
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < targets.size(); i++) {
                checkLength("sweep.targets[" + i + "]", targets.get(i), pad);
                if (!seen.add(targets.get(i))) {
                    throw error("sweep.targets[" + i + "]", "the target " + targets.get(i) + " is listed twice");
                }
            }
            List<Long> curve = raw.curve() == null ? List.of() : List.copyOf(raw.curve());
            for (int i = 0; i < curve.size(); i++) {
                checkLength("sweep.curve[" + i + "]", curve.get(i), pad);
            }
            if (!curve.isEmpty() && strategy == Strategy.LIST) {
                throw error(
                        "sweep.curve",
                        "sweep.curve adds lengths to a frontier search; with strategy 'list' put them in 'targets'");
            }
            if (strategy == Strategy.LIST && targets.isEmpty()) {
                throw error(
                        "sweep",
                        "strategy 'list' needs targets, e.g. 'targets: [65536, 131072]' (prompt lengths in tokens)");
            }
            Frontier frontier = null;
            if (raw.frontier() != null) {
                frontier = checkFrontier(raw.frontier(), pad);
            } else if (strategy == Strategy.FRONTIER) {
                throw error("sweep", "strategy 'frontier' needs bounds, e.g. 'frontier: {min: 4096, max: 65536}'");
            }
            return new Sweep(
                    strategy,
                    targets,
                    curve,
                    raw.stopAfterFailure() != null && raw.stopAfterFailure(),
                    frontier,
                    restart);
        }

        private Frontier checkFrontier(ExperimentFile.FrontierFile f, long pad) throws ExperimentError {
            if (f.min() == null || f.max() == null) {
                throw error("sweep.frontier", "sweep.frontier needs 'min' and 'max' (prompt lengths in tokens)");
            }
            checkLength("sweep.frontier.min", f.min(), pad);
            checkLength("sweep.frontier.max", f.max(), pad);
            if (f.max() < f.min()) {
                throw error(
                        "sweep.frontier.max", "sweep.frontier.max (" + f.max() + ") is below min (" + f.min() + ")");
            }
            double precision = f.precision() == null ? Defaults.PRECISION : f.precision();
            if (!(precision > 0 && precision < 1)) {
                throw error("sweep.frontier.precision", "precision is relative, between 0 and 1, e.g. 0.01 for 1%");
            }
            long align = f.align() == null ? Defaults.ALIGN : f.align();
            if (align <= 0 || align > f.min()) {
                throw error("sweep.frontier.align", "align must be 1 or more and at most min, e.g. " + Defaults.ALIGN);
            }
            int maxLaunches = f.maxLaunches() == null ? Defaults.MAX_LAUNCHES : f.maxLaunches();
            if (maxLaunches <= 0) {
                throw error(
                        "sweep.frontier.max_launches", "max_launches must be 1 or more, e.g. " + Defaults.MAX_LAUNCHES);
            }
            Experiment.Start start = Defaults.START;
            if (f.start() != null) {
                switch (f.start()) {
                    case "plan" -> start = Experiment.Start.PLAN;
                    case "max" -> start = Experiment.Start.MAX;
                    default ->
                        throw error(
                                "sweep.frontier.start",
                                "sweep.frontier.start is 'plan' (begin at the predicted frontier) or 'max', not '"
                                        + f.start() + "'");
                }
            }
            return new Frontier(f.min(), f.max(), precision, align, maxLaunches, start);
        }

        private void checkLength(String path, Long target, long pad) throws ExperimentError {
            if (target == null || target <= 0) {
                throw error(path, "a length is a number of tokens above 0, found " + target);
            }
            if (target > MAX_LENGTH - pad) {
                throw error(
                        path,
                        "target " + target + " + context_pad " + pad + " exceeds " + MAX_LENGTH
                                + ", the largest max_model_len an engine accepts: lower the target");
            }
        }

        private Timeouts checkTimeouts(TimeoutsFile raw) throws ExperimentError {
            TimeoutsFile t = raw == null ? new TimeoutsFile(null, null, null, null) : raw;
            return new Timeouts(
                    seconds("timeouts.startup_s", t.startupS(), Defaults.STARTUP),
                    seconds("timeouts.request_s", t.requestS(), Defaults.REQUEST),
                    seconds("timeouts.shutdown_s", t.shutdownS(), Defaults.SHUTDOWN),
                    seconds("timeouts.queue_s", t.queueS(), Defaults.QUEUE));
        }

        private Duration seconds(String path, Double value, Duration unset) throws ExperimentError {
            if (value == null) {
                return unset;
            }
            double v = value;
            if (!(v > 0) || !Double.isFinite(v)) {
                throw error(
                        path,
                        path + " is a number of seconds above 0, found "
                                + (Double.isInfinite(v)
                                        ? ".inf: give a finite number, e.g. " + Defaults.STARTUP.toSeconds()
                                        : value));
            }
            return Duration.ofNanos(Math.round(v * 1e9));
        }

        // `launcher: slurm` is short for `launcher: {kind: slurm}`.
        private Map<String, Object> launcherMap(String path, Object raw) throws ExperimentError {
            if (raw == null) {
                return Map.of();
            }
            if (raw instanceof String kind) {
                return Map.of("kind", kind);
            }
            if (raw instanceof Map<?, ?> m) {
                Map<String, Object> out = new LinkedHashMap<>();
                m.forEach((k, v) -> out.put(String.valueOf(k), v));
                return out;
            }
            throw error(
                    path,
                    path + " is a launcher kind (" + String.join(", ", launchers.kinds())
                            + ") or a mapping with 'kind' and that launcher's options");
        }

        private Experiment.Launcher checkLauncher(String path, Map<String, Object> merged) throws ExperimentError {
            Object kind = merged.getOrDefault("kind", launchers.kinds().getFirst());
            if (!(kind instanceof String k) || !launchers.kinds().contains(k)) {
                throw error(
                        path, "unknown launcher '" + kind + "': use one of " + String.join(", ", launchers.kinds()));
            }
            Map<String, Object> options = new LinkedHashMap<>(merged);
            options.remove("kind");
            Map<String, String> problems = launchers.check(k, options);
            if (!problems.isEmpty()) {
                Map.Entry<String, String> first = problems.entrySet().iterator().next();
                throw error(first.getKey().isEmpty() ? path : path + "." + first.getKey(), first.getValue());
            }
            return new Experiment.Launcher(k, options);
        }

        private List<Backend> checkBackends(
                List<BackendFile> raw,
                Map<String, String> env,
                Map<String, Object> vars,
                Timeouts timeouts,
                Map<String, Object> launcher)
                throws ExperimentError {
            if (raw == null || raw.isEmpty()) {
                throw error("", "'backends' is missing: list at least one engine with its server command");
            }
            List<Backend> backends = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (int i = 0; i < raw.size(); i++) {
                String at = "backends[" + i + "]";
                BackendFile b = raw.get(i);
                if (b == null) {
                    throw error(at, "this backend is empty: give at least name, engine and command");
                }
                String name = required(b.name(), at + ".name", "name each backend, e.g. 'name: vllm'");
                if (!SAFE_NAME.matcher(name).matches()) {
                    throw error(
                            at + ".name",
                            "the backend name '" + name + "' is used in log file names: use letters, digits,"
                                    + " '.', '_' and '-'");
                }
                if (!names.add(name)) {
                    throw error(at + ".name", "the backend name '" + name + "' is used twice: names must differ");
                }
                String engine = required(b.engine(), at + ".engine", "one of " + knownEngines);
                if (!knownEngines.contains(engine)) {
                    throw error(at + ".engine", "unknown engine '" + engine + "': use one of " + knownEngines);
                }
                if (b.port() != null && (b.port() < 1 || b.port() > 65535)) {
                    throw error(
                            at + ".port",
                            "port " + b.port() + " is outside 1..65535: give a free port, or leave it out to let"
                                    + " ctxprobe pick one");
                }
                Map<String, String> ownEnv = checkEnv(at + ".env", b.env());
                Map<String, Object> ownVars = checkVars(at + ".vars", b.vars());
                Map<String, String> mergedEnv = new LinkedHashMap<>(env);
                mergedEnv.putAll(ownEnv);
                Map<String, Object> mergedVars = new LinkedHashMap<>(vars);
                mergedVars.putAll(ownVars);
                String command = b.command();
                boolean launches = !enginesWithoutLaunch.contains(engine);
                Map<String, Object> ownLauncher = new LinkedHashMap<>(launcher);
                Map<String, Object> override = launcherMap(at + ".launcher", b.launcher());
                if (override.containsKey("kind") && !override.get("kind").equals(launcher.get("kind"))) {
                    // Another kind's options do not carry over.
                    ownLauncher.clear();
                }
                ownLauncher.putAll(override);
                Experiment.Launcher where =
                        checkLauncher(b.launcher() != null ? at + ".launcher" : "launcher", ownLauncher);
                if (launches) {
                    required(
                            command,
                            at + ".command",
                            "give the server command, e.g. 'vllm serve {model} --port {port}'");
                    checkCommand(at + ".command", command, mergedVars.keySet(), where.kind());
                } else if (command != null) {
                    throw error(
                            at + ".command",
                            "engine '" + engine + "' talks to a running endpoint and launches nothing: remove"
                                    + " 'command', give 'host' and 'port'");
                } else if (b.port() == null) {
                    throw error(at, "engine '" + engine + "' needs the 'port' of the running endpoint");
                }
                String health = b.healthPath();
                if (health != null && !health.matches("/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")) {
                    throw error(
                            at + ".health_path",
                            "health_path is a URL path starting with '/' without spaces or a query, e.g. /health");
                }
                IdRange ids = null;
                if (b.tokenIds() != null) {
                    List<Integer> r = b.tokenIds();
                    if (r.size() != 2 || r.get(0) == null || r.get(1) == null || r.get(0) < 0 || r.get(1) <= r.get(0)) {
                        throw error(
                                at + ".token_ids",
                                "token_ids is [from, to): two ids with from < to, e.g. [1000, 30000]");
                    }
                    ids = new IdRange(r.get(0), r.get(1));
                }
                if (b.apiKeyEnv() != null && !ENV_NAME.matcher(b.apiKeyEnv()).matches()) {
                    throw error(
                            at + ".api_key_env",
                            "api_key_env names an environment variable (e.g. OPENAI_API_KEY), never the key itself");
                }
                boolean autoFirst = Boolean.TRUE.equals(b.autoFirst());
                if (autoFirst && !enginesThatSizeThemselves.contains(engine)) {
                    throw error(
                            at + ".auto_first",
                            "engine '" + engine + "' cannot fit its context to memory itself; auto_first works with "
                                    + (enginesThatSizeThemselves.isEmpty()
                                            ? "no engine"
                                            : String.join(", ", new TreeSet<>(enginesThatSizeThemselves)))
                                    + ": remove it");
                }
                if (autoFirst && !CommandTemplate.parse(command).placeholders().contains("max_model_len")) {
                    throw error(
                            at + ".auto_first",
                            "auto_first replaces {max_model_len} in the command, which has none: put"
                                    + " --max-model-len {max_model_len} in it");
                }
                backends.add(new Backend(
                        name,
                        engine,
                        b.host() == null ? Defaults.HOST : b.host(),
                        b.port(),
                        command,
                        Collections.unmodifiableMap(mergedEnv),
                        Collections.unmodifiableMap(mergedVars),
                        health,
                        seconds(at + ".startup_s", b.startupS(), timeouts.startup()),
                        ids,
                        b.apiKeyEnv(),
                        where,
                        modelConfig(at + ".model_config", b.modelConfig()),
                        gib(at + ".weights_gib", b.weightsGib(), "the model's weights, e.g. 'weights_gib: 152.5'"),
                        autoFirst));
            }
            return List.copyOf(backends);
        }

        private void checkCommand(String path, String command, Set<String> varNames, String launcherKind)
                throws ExperimentError {
            CommandTemplate template;
            try {
                template = CommandTemplate.parse(command);
            } catch (IllegalArgumentException e) {
                throw error(path, "the command cannot be split into arguments: " + e.getMessage());
            }
            Set<String> known = new TreeSet<>(BUILT_IN_PLACEHOLDERS);
            known.addAll(varNames);
            known.addAll(launchers.placeholders(launcherKind));
            for (String p : template.placeholders()) {
                if (!known.contains(p)) {
                    for (String kind : launchers.kinds()) {
                        if (launchers.placeholders(kind).contains(p)) {
                            throw error(
                                    path,
                                    "{" + p + "} is filled in for each node by the '" + kind + "' launcher; this"
                                            + " backend's launcher is '" + launcherKind + "': set 'launcher: "
                                            + kind + "' or remove {" + p + "}");
                        }
                    }
                    throw error(
                            path,
                            "unknown placeholder {" + p + "}: define it under 'vars' or use one of "
                                    + known.stream().map(k -> "{" + k + "}").collect(Collectors.joining(", ")));
                }
            }
        }
    }
}
