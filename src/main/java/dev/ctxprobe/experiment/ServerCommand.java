package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.secrets.Redactor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server command of one step, resolved from a backend's template.
 *
 * @param argv the exact argument vector, never passed to a shell: what the launch alone gets
 * @param shown the vector as it may be shown (validate, results, console): the values of {@code {env:NAME}}
 *     placeholders and of secret-carrying flags replaced by {@code <masked>} (docs/experiment-file.md#secrets)
 * @param serverArgs {@code shown} joined by spaces, as the seeds' {@code server_args}
 * @param secrets the real values {@code shown} masks: what the run's logs and results must not show either
 */
public record ServerCommand(
        List<String> argv,
        List<String> shown,
        String serverArgs,
        List<String> secrets,
        long targetLen,
        long maxModelLen,
        String host,
        int port) {

    public ServerCommand {
        argv = List.copyOf(argv);
        shown = List.copyOf(shown);
        secrets = List.copyOf(secrets);
    }

    // Its text must never hold the real values.
    @Override
    public String toString() {
        return "ServerCommand[" + serverArgs + "]";
    }

    /**
     * Resolves the backend's template for a target and port. The experiment was checked, so a placeholder without a
     * value here is one the backend's launcher fills in for each node (e.g. {@code {node_rank}}): it stays as written.
     */
    public static ServerCommand resolve(Experiment experiment, Backend backend, long target, int port) {
        return resolve(experiment, backend, target, port, null);
    }

    /**
     * As {@link #resolve(Experiment, Backend, long, int)}, with {@code {max_model_len}} replaced by {@code
     * autoLength} (vLLM's {@code auto}) when that is not null: the engine then fits its context to memory, and
     * {@link #maxModelLen} is 0 until the server states it ({@link #withMaxModelLen}).
     */
    public static ServerCommand resolve(
            Experiment experiment, Backend backend, long target, int port, String autoLength) {
        long maxModelLen = autoLength == null ? target + experiment.contextPad() : 0;
        Map<String, String> values = new LinkedHashMap<>();
        backend.vars().forEach((k, v) -> values.put(k, format(v)));
        values.put("model", experiment.model());
        values.put("target_len", Long.toString(target));
        values.put("max_model_len", autoLength == null ? Long.toString(maxModelLen) : autoLength);
        values.put("host", backend.host());
        values.put("port", Integer.toString(port));
        List<String> argv = List.of();
        List<String> shown = List.of();
        List<String> secrets = new ArrayList<>();
        if (backend.command() != null) {
            CommandTemplate template = CommandTemplate.parse(backend.command());
            Map<String, String> masked = new LinkedHashMap<>(values);
            for (String p : template.placeholders()) {
                String fromEnv = experiment.fromEnvironment().get(p);
                if (fromEnv != null) {
                    values.put(p, fromEnv);
                    masked.put(p, Redactor.MASK);
                    secrets.add(fromEnv);
                }
                values.putIfAbsent(p, "{" + p + "}");
                masked.putIfAbsent(p, "{" + p + "}");
            }
            argv = template.render(values);
            shown = experiment.flags().shown(template.render(masked));
            secrets.addAll(experiment.flags().values(argv));
        }
        return new ServerCommand(
                argv, shown, String.join(" ", shown), secrets, target, maxModelLen, backend.host(), port);
    }

    /** True when the engine was left to fit its context itself: the length is known once the server states it. */
    public boolean selfSized() {
        return maxModelLen == 0;
    }

    /** The same command, for a server that stated the length it fitted itself to. */
    public ServerCommand withMaxModelLen(long stated) {
        return new ServerCommand(argv, shown, serverArgs, secrets, targetLen, stated, host, port);
    }

    /** The same command, its step answering {@code target}. */
    public ServerCommand withTarget(long target) {
        return new ServerCommand(argv, shown, serverArgs, secrets, target, maxModelLen, host, port);
    }

    /** A variable as it appears in a command: numbers without a spurious ".0". */
    static String format(Object value) {
        if (value instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d)) {
            return Long.toString(d.longValue());
        }
        return String.valueOf(value);
    }
}
