package dev.ctxprobe.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Everything needed to start one server and know when it is ready.
 *
 * @param name a name for the launch, unique within the run, e.g. {@code vllm_ctx_65536} (a cluster job's name)
 * @param argv the exact argument vector; a first word {@code ctxprobe} runs this very ctxprobe
 * @param env added to the server's environment
 * @param logFile receives the server's stdout and stderr
 * @param host the address the server binds (a wildcard is reached on loopback)
 * @param readinessPath polled with GET until it answers 200
 * @param readyLines lines the engine prints once it serves (its profile's): seeing one, readiness is probed at once
 * @param startupTimeout how long it may take to become ready once it runs
 * @param queueTimeout how long a cluster may keep it waiting before it runs; a local launch never waits
 */
public record LaunchSpec(
        String name,
        List<String> argv,
        Map<String, String> env,
        Path logFile,
        String host,
        int port,
        String readinessPath,
        List<String> readyLines,
        Duration startupTimeout,
        Duration shutdownTimeout,
        Duration queueTimeout) {

    /** Waiting for no queue: what a launch on this machine needs. */
    public static final Duration NO_QUEUE = Duration.ZERO;

    public LaunchSpec {
        argv = List.copyOf(argv);
        env = Map.copyOf(env);
        readyLines = List.copyOf(readyLines);
    }
}
