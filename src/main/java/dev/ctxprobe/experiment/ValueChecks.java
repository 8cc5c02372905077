package dev.ctxprobe.experiment;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The checks of single values that the top level and each backend share, each pointing at the value it concerns
 * with the file's line and column.
 */
final class ValueChecks {
    /** Names that become folder and log file names. */
    static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

    /** The longest file name Linux file systems hold (NAME_MAX), in bytes; a safe name's bytes are its characters. */
    static final int NAME_MAX = 255;

    /**
     * The most a step adds to a backend's name in its file names: the target, the concurrency, a relaunch's number
     * and the Slurm script's ending ({@code logs/<backend>_ctx_<target>_n<concurrency>.<n>.sbatch.sh}).
     */
    static final int STEP_SUFFIX = ("_ctx_" + Defaults.MAX_MODEL_LEN + "_n" + 10_000 + ".999.sbatch.sh").length();

    /** The longest backend name: with the longest step suffix, still one file name (docs/experiment-file.md). */
    static final int BACKEND_NAME_MAX = NAME_MAX - STEP_SUFFIX;

    /** Environment variable names: {@code env}, {@code api_key_env}, {@code secrets}, {@code pass_env}. */
    static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

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
            "concurrency",
            "frontier",
            "timeouts",
            "verify",
            "backend_vars",
            "matrix");

    private final Path file;
    private final SourceMap where;

    ValueChecks(Path file, SourceMap where) {
        this.file = file;
        this.where = where;
    }

    /** The file the values come from. */
    Path file() {
        return file;
    }

    /** The problem at the value of {@code path} ("" for the whole file), with its line and column. */
    ExperimentError error(String path, String problem) {
        SourceMap.Position p = where.at(path);
        return new ExperimentError(file, p.line(), p.column(), problem);
    }

    /** The scalar at {@code path} exactly as the file writes it ({@code 0.90}, not the number 0.9); null for none. */
    String written(String path) {
        SourceMap.Found found = where.found(path);
        return found == null ? null : found.text();
    }

    String required(String value, String path, String hint) throws ExperimentError {
        if (value == null || value.isBlank()) {
            throw error(path, "'" + path + "' is missing: " + hint);
        }
        return value;
    }

    Map<String, String> checkEnv(String path, Map<String, String> env) throws ExperimentError {
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

    Map<String, Object> checkVars(String path, Map<String, Object> vars) throws ExperimentError {
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
            if (ExperimentLoader.BUILT_IN_PLACEHOLDERS.contains(key) || RESERVED_CONFIG_KEYS.contains(key)) {
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

    Duration seconds(String path, Double value, Duration unset) throws ExperimentError {
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

    String modelConfig(String path, String value) throws ExperimentError {
        if (value != null && value.isBlank()) {
            throw error(path, path + " is the path of a model's config.json, e.g. 'model_config: models/config.json'");
        }
        return value;
    }

    Double gib(String path, Double value, String example) throws ExperimentError {
        if (value != null && !(value > 0 && Double.isFinite(value))) {
            throw error(path, path + " is a size in GiB above 0: " + example);
        }
        return value;
    }
}
