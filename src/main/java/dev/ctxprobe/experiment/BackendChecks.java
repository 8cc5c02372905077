package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.Experiment.IdRange;
import dev.ctxprobe.experiment.Experiment.Timeouts;
import dev.ctxprobe.experiment.ExperimentFile.BackendFile;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The checks of each backend (docs/experiment-file.md#backends): its name, engine and port, the launcher it runs
 * under, its command's placeholders, and what its engine allows ({@code auto_first}, no command for an endpoint that
 * is already running).
 */
final class BackendChecks {
    private final ValueChecks values;
    private final Set<String> knownEngines;
    private final Set<String> enginesThatSizeThemselves;
    private final Set<String> enginesWithTokenizer;
    private final ExperimentLoader.LauncherKinds launchers;
    private final Map<String, String> environment;
    /** The values of the {@code {env:NAME}} placeholders the commands use, by placeholder ({@code env:NAME}). */
    private final Map<String, String> fromEnvironment = new java.util.TreeMap<>();

    BackendChecks(
            ValueChecks values,
            Set<String> knownEngines,
            Set<String> enginesThatSizeThemselves,
            Set<String> enginesWithTokenizer,
            ExperimentLoader.LauncherKinds launchers,
            Map<String, String> environment) {
        this.environment = environment;
        this.values = values;
        this.knownEngines = knownEngines;
        this.enginesThatSizeThemselves = enginesThatSizeThemselves;
        this.enginesWithTokenizer = enginesWithTokenizer;
        this.launchers = launchers;
    }

    /** The values the commands' {@code {env:NAME}} placeholders take, keyed {@code env:NAME}. */
    Map<String, String> fromEnvironment() {
        return Collections.unmodifiableMap(fromEnvironment);
    }

    /**
     * {@code check} at {@code path} (docs/experiment-file.md#check): {@code passkey}, {@code none}, or a mapping with
     * {@code kind: passkey} and its {@code depths} and {@code control_len}; absent, {@code inherited}.
     */
    Check check(String path, Object raw, Check inherited) throws ExperimentError {
        if (raw == null) {
            return inherited;
        }
        String usage = path + " is 'passkey', 'none', or {kind: passkey, depths: [0.1, 0.5, 0.9], control_len: "
                + Check.CONTROL_LEN + "}";
        if (raw instanceof String word) {
            return switch (word) {
                case Check.PASSKEY -> Check.passkey();
                case "none" -> null;
                default -> throw error(path, "unknown check '" + word + "': " + usage);
            };
        }
        if (!(raw instanceof Map<?, ?> m)) {
            throw error(path, usage);
        }
        for (Object key : m.keySet()) {
            List<String> keys = List.of("kind", "depths", "control_len");
            if (!keys.contains(String.valueOf(key))) {
                throw error(
                        path + "." + key,
                        "unknown key '" + key + "'" + DidYouMean.hint(String.valueOf(key), keys) + ": " + usage);
            }
        }
        Object kind = m.get("kind");
        if ("none".equals(kind)) {
            return null;
        }
        if (!Check.PASSKEY.equals(kind)) {
            throw error(path + ".kind", "kind is 'passkey' (the one check there is) or 'none'");
        }
        List<Double> depths = Check.DEPTHS;
        if (m.containsKey("depths")) {
            depths = depths(path + ".depths", m.get("depths"));
        }
        long controlLen = Check.CONTROL_LEN;
        Object rawControl = m.get("control_len");
        if (rawControl != null) {
            if (!(rawControl instanceof Number n) || n.longValue() != n.doubleValue() || n.longValue() < 64) {
                throw error(
                        path + ".control_len",
                        "control_len is the length in tokens of the short control, at least 64, e.g. "
                                + Check.CONTROL_LEN);
            }
            controlLen = n.longValue();
        }
        return new Check(depths, controlLen);
    }

    // Strictly between 0 and 1: a key at either end lies against the opening or the question, not in the text.
    private List<Double> depths(String path, Object raw) throws ExperimentError {
        String usage = "depths is a non-empty list of numbers strictly between 0 (just after the opening) and 1 (just"
                + " before the question), e.g. [0.1, 0.5, 0.9]";
        if (!(raw instanceof List<?> list)) {
            throw error(path, usage + ", not " + raw);
        }
        if (list.isEmpty()) {
            throw error(path, usage + ", not an empty list");
        }
        List<Double> read = new ArrayList<>();
        for (Object d : list) {
            if (!(d instanceof Number n)) {
                throw error(path, usage + ": " + d + " is not a number");
            }
            if (!(n.doubleValue() > 0 && n.doubleValue() < 1)) {
                throw error(path, usage + ": " + d + " is not between 0 and 1");
            }
            if (read.contains(n.doubleValue())) {
                throw error(path, usage + ": " + d + " is listed twice");
            }
            read.add(n.doubleValue());
        }
        return List.copyOf(read);
    }

    private ExperimentError error(String path, String problem) {
        return values.error(path, problem);
    }

    // `launcher: slurm` is short for `launcher: {kind: slurm}`.
    Map<String, Object> launcherMap(String path, Object raw) throws ExperimentError {
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
            throw error(path, "unknown launcher '" + kind + "': use one of " + String.join(", ", launchers.kinds()));
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

    List<Backend> checkBackends(
            List<BackendFile> raw,
            Map<String, String> env,
            Map<String, Object> vars,
            Timeouts timeouts,
            Map<String, Object> launcher,
            Check fileCheck,
            Map<String, List<String>> topMatrix)
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
            String name = values.required(b.name(), at + ".name", "name each backend, e.g. 'name: vllm'");
            if (!ValueChecks.SAFE_NAME.matcher(name).matches()) {
                throw error(
                        at + ".name",
                        "the backend name '" + name + "' is used in log file names: use letters, digits,"
                                + " '.', '_' and '-'");
            }
            if (name.length() > ValueChecks.BACKEND_NAME_MAX) {
                throw error(
                        at + ".name",
                        "the backend name is " + name.length() + " characters long; with a step's target and"
                                + " concurrency it becomes a log file name, which holds at most "
                                + ValueChecks.NAME_MAX + " bytes: use at most " + ValueChecks.BACKEND_NAME_MAX
                                + " characters");
            }
            if (!names.add(name)) {
                throw error(at + ".name", "the backend name '" + name + "' is used twice: names must differ");
            }
            String engine = values.required(b.engine(), at + ".engine", "one of " + knownEngines);
            if (!knownEngines.contains(engine)) {
                throw error(
                        at + ".engine",
                        "unknown engine '" + engine + "'" + DidYouMean.hint(engine, knownEngines) + "; use one of "
                                + knownEngines);
            }
            if (b.port() != null && (b.port() < 1 || b.port() > 65535)) {
                throw error(
                        at + ".port",
                        "port " + b.port() + " is outside 1..65535: give a free port, or leave it out to let"
                                + " ctxprobe pick one");
            }
            Map<String, String> ownEnv = values.checkEnv(at + ".env", b.env());
            Map<String, Object> ownVars = values.checkVars(at + ".vars", b.vars());
            Map<String, String> mergedEnv = new LinkedHashMap<>(env);
            mergedEnv.putAll(ownEnv);
            Map<String, Object> mergedVars = new LinkedHashMap<>(vars);
            mergedVars.putAll(ownVars);
            Map<String, List<String>> ownMatrix = new MatrixChecks(values).check(at + ".matrix", b.matrix());
            Map<String, List<String>> matrix = MatrixChecks.merged(topMatrix, ownMatrix);
            Set<String> placeholders = new HashSet<>(mergedVars.keySet());
            placeholders.addAll(matrix.keySet());
            String command = b.command();
            Map<String, Object> ownLauncher = new LinkedHashMap<>(launcher);
            Map<String, Object> override = launcherMap(at + ".launcher", b.launcher());
            if (command == null && b.launcher() == null) {
                if (b.port() == null) {
                    throw error(
                            at + ".command",
                            "'" + at + ".command' is missing: give the server command, e.g. 'vllm serve {model}"
                                    + " --port {port}', or the 'port' of an endpoint that is already running");
                }
                // A backend without a command of its own talks to an endpoint that is already running.
                override = Map.of("kind", Defaults.EXTERNAL_LAUNCHER);
            }
            if (override.containsKey("kind") && !override.get("kind").equals(launcher.get("kind"))) {
                // Another kind's options do not carry over.
                ownLauncher.clear();
            }
            ownLauncher.putAll(override);
            Experiment.Launcher where =
                    checkLauncher(b.launcher() != null ? at + ".launcher" : "launcher", ownLauncher);
            boolean external = where.kind().equals(Defaults.EXTERNAL_LAUNCHER);
            if (!external) {
                values.required(
                        command,
                        at + ".command",
                        "give the server command, e.g. 'vllm serve {model} --port {port}', or leave out 'launcher'"
                                + " for an endpoint that is already running");
                checkCommand(at + ".command", command, placeholders, where.kind());
                Set<String> used = CommandTemplate.parse(command).placeholders();
                for (String key : matrix.keySet()) {
                    if (!used.contains(key)) {
                        throw error(
                                ownMatrix.containsKey(key) ? at + ".matrix." + key : "matrix." + key,
                                "the parameter '" + key + "' is not used in the command of backend '" + name
                                        + "', so its cells would all be the same: put {" + key
                                        + "} in the command, or remove it from the matrix");
                    }
                }
            } else if (!matrix.isEmpty()) {
                throw error(
                        ownMatrix.isEmpty() ? "matrix" : at + ".matrix",
                        "a matrix varies a server command, and backend '" + name + "' is an endpoint that is"
                                + " already running: give it a command, or move the matrix into the backends"
                                + " that have one");
            } else if (command != null) {
                throw error(
                        at + ".command",
                        "the external launcher starts nothing, it sends requests to a running endpoint: remove"
                                + " 'command' and give 'host' and 'port', or use a launcher that starts the server");
            } else if (b.port() == null) {
                throw error(
                        at + ".port",
                        "an endpoint that is already running needs its 'port' (and 'host' when it is not this"
                                + " machine)");
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
                            at + ".token_ids", "token_ids is [from, to): two ids with from < to, e.g. [1000, 30000]");
                }
                ids = new IdRange(r.get(0), r.get(1));
            }
            if (b.apiKeyEnv() != null
                    && !ValueChecks.ENV_NAME.matcher(b.apiKeyEnv()).matches()) {
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
            if (autoFirst && external) {
                throw error(
                        at + ".auto_first",
                        "auto_first launches the server with an automatic length, and an endpoint that is already"
                                + " running is not launched: remove it");
            }
            if (autoFirst && !CommandTemplate.parse(command).placeholders().contains("max_model_len")) {
                throw error(
                        at + ".auto_first",
                        "auto_first replaces {max_model_len} in the command, which has none: put"
                                + " --max-model-len {max_model_len} in it");
            }
            Check check = check(at + ".check", b.check(), fileCheck);
            if (check != null && !enginesWithTokenizer.contains(engine)) {
                throw error(
                        b.check() != null ? at + ".check" : "check",
                        "a pass-key prompt is made exactly as long as the target with the server's own tokenizer"
                                + " (POST /tokenize), and engine '" + engine + "' has none ctxprobe can ask: give"
                                + " this backend 'check: none', or name the engine it really runs ("
                                + String.join(", ", new TreeSet<>(enginesWithTokenizer)) + ")");
            }
            for (Map<String, String> cell : MatrixChecks.cells(matrix)) {
                Map<String, Object> cellVars = new LinkedHashMap<>(mergedVars);
                cellVars.putAll(cell);
                backends.add(new Backend(
                        dev.ctxprobe.results.CellName.of(name, cell),
                        engine,
                        b.host() == null ? Defaults.HOST : b.host(),
                        b.port(),
                        command,
                        Collections.unmodifiableMap(mergedEnv),
                        Collections.unmodifiableMap(cellVars),
                        health,
                        values.seconds(at + ".startup_s", b.startupS(), timeouts.startup()),
                        ids,
                        b.apiKeyEnv(),
                        where,
                        values.modelConfig(at + ".model_config", b.modelConfig()),
                        values.gib(
                                at + ".weights_gib", b.weightsGib(), "the model's weights, e.g. 'weights_gib: 152.5'"),
                        autoFirst,
                        check,
                        cell));
            }
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
        Set<String> known = new TreeSet<>(ExperimentLoader.BUILT_IN_PLACEHOLDERS);
        known.addAll(varNames);
        known.addAll(launchers.placeholders(launcherKind));
        for (String p : template.placeholders()) {
            if (p.startsWith(CommandTemplate.ENV)) {
                String name = p.substring(CommandTemplate.ENV.length());
                String value = environment.get(name);
                if (value == null) {
                    throw error(
                            path,
                            "{" + p + "} takes its value from ctxprobe's environment, where " + name + " is not set:"
                                    + " export " + name + " before running ctxprobe");
                }
                fromEnvironment.put(p, value);
                continue;
            }
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
