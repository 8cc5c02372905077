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
    private final ExperimentLoader.LauncherKinds launchers;

    BackendChecks(
            ValueChecks values,
            Set<String> knownEngines,
            Set<String> enginesThatSizeThemselves,
            ExperimentLoader.LauncherKinds launchers) {
        this.values = values;
        this.knownEngines = knownEngines;
        this.enginesThatSizeThemselves = enginesThatSizeThemselves;
        this.launchers = launchers;
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
            String name = values.required(b.name(), at + ".name", "name each backend, e.g. 'name: vllm'");
            if (!ValueChecks.SAFE_NAME.matcher(name).matches()) {
                throw error(
                        at + ".name",
                        "the backend name '" + name + "' is used in log file names: use letters, digits,"
                                + " '.', '_' and '-'");
            }
            if (!names.add(name)) {
                throw error(at + ".name", "the backend name '" + name + "' is used twice: names must differ");
            }
            String engine = values.required(b.engine(), at + ".engine", "one of " + knownEngines);
            if (!knownEngines.contains(engine)) {
                throw error(at + ".engine", "unknown engine '" + engine + "': use one of " + knownEngines);
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
                checkCommand(at + ".command", command, mergedVars.keySet(), where.kind());
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
            backends.add(new Backend(
                    name,
                    engine,
                    b.host() == null ? Defaults.HOST : b.host(),
                    b.port(),
                    command,
                    Collections.unmodifiableMap(mergedEnv),
                    Collections.unmodifiableMap(mergedVars),
                    health,
                    values.seconds(at + ".startup_s", b.startupS(), timeouts.startup()),
                    ids,
                    b.apiKeyEnv(),
                    where,
                    values.modelConfig(at + ".model_config", b.modelConfig()),
                    values.gib(at + ".weights_gib", b.weightsGib(), "the model's weights, e.g. 'weights_gib: 152.5'"),
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
        Set<String> known = new TreeSet<>(ExperimentLoader.BUILT_IN_PLACEHOLDERS);
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
