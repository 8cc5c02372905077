package dev.ctxprobe.experiment;

import dev.ctxprobe.experiment.Experiment.Backend;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The server command of one step, resolved from a backend's template.
 *
 * @param argv the exact argument vector, never passed to a shell
 * @param serverArgs the words joined by spaces, as the seeds' {@code server_args}
 */
public record ServerCommand(
        List<String> argv, String serverArgs, long targetLen, long maxModelLen, String host, int port) {

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
        if (backend.command() != null) {
            CommandTemplate template = CommandTemplate.parse(backend.command());
            template.placeholders().forEach(p -> values.putIfAbsent(p, "{" + p + "}"));
            argv = template.render(values);
        }
        return new ServerCommand(argv, String.join(" ", argv), target, maxModelLen, backend.host(), port);
    }

    /** True when the engine was left to fit its context itself: the length is known once the server states it. */
    public boolean selfSized() {
        return maxModelLen == 0;
    }

    /** The same command, for a server that stated the length it fitted itself to. */
    public ServerCommand withMaxModelLen(long stated) {
        return new ServerCommand(argv, serverArgs, targetLen, stated, host, port);
    }

    /** The same command, its step answering {@code target}. */
    public ServerCommand withTarget(long target) {
        return new ServerCommand(argv, serverArgs, target, maxModelLen, host, port);
    }

    /** A variable as it appears in a command: numbers without a spurious ".0". */
    static String format(Object value) {
        if (value instanceof Double d && d == Math.rint(d) && !Double.isInfinite(d)) {
            return Long.toString(d.longValue());
        }
        return String.valueOf(value);
    }
}
