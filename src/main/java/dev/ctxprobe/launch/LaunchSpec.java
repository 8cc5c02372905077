package dev.ctxprobe.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Everything needed to start one server and know when it is ready.
 *
 * @param argv the exact argument vector; a first word {@code ctxprobe} runs this very ctxprobe
 * @param env added to the inherited environment
 * @param logFile receives the server's stdout and stderr
 * @param readinessPath polled with GET until it answers 200
 */
public record LaunchSpec(
        List<String> argv,
        Map<String, String> env,
        Path logFile,
        String host,
        int port,
        String readinessPath,
        Duration startupTimeout,
        Duration shutdownTimeout) {}
