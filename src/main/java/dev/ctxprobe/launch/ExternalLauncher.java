package dev.ctxprobe.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * An endpoint that is already running ({@code launcher: external}): a launch hands back its host and port, and a stop
 * stops nothing. The experiment's engine still names the texts its answers are read with ({@code openai}, or
 * {@code vllm} for a vLLM server someone else started).
 */
public final class ExternalLauncher implements Launcher {

    /** The word for it in the experiment file. */
    public static final String KIND = "external";

    @Override
    public Optional<Refusal> preflight(LaunchSpec spec) {
        return Optional.empty();
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) {
        return new Running(new Endpoint(Ports.connectHost(spec.host()), spec.port()));
    }

    /** A server ctxprobe did not start: no process, no log of its own, nothing to stop. */
    private record Running(Endpoint endpoint) implements ServerHandle {

        @Override
        public String id() {
            return null;
        }

        @Override
        public Path log() {
            return null;
        }

        @Override
        public Readiness awaitReady() {
            // It is running by the experiment's word; a server that is not answers the first request with the cause.
            return new Readiness.Ready(Duration.ZERO, "already running at " + endpoint);
        }

        @Override
        public boolean isAlive() {
            return true;
        }

        @Override
        public Optional<Termination> awaitExit(Duration limit) {
            return Optional.empty();
        }

        @Override
        public Optional<Termination> termination() {
            return Optional.empty();
        }

        @Override
        public StopReport stop() {
            return StopReport.NOTHING;
        }
    }

    /** The {@code external} kind: no options, nothing left behind by a killed run. */
    public static final class Provider implements LauncherProvider {

        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Launcher create(LaunchContext context, Map<String, Object> options) {
            return new ExternalLauncher();
        }

        @Override
        public Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait) {
            return Optional.empty();
        }
    }
}
