package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A launcher written against the contract alone, to prove it is enough: it starts the server as a local process
 * group (on the port ctxprobe chose) and hands back an endpoint on another port, where a relay passes every byte
 * through. Requests reach the server only if ctxprobe talks to the endpoint the handle names. Registered for tests
 * as the kind {@code relay} (META-INF/services); its one option, {@code label}, shows up in every server id.
 */
public final class RelayLauncher implements Launcher {
    /** The kind experiments name it by. */
    public static final String KIND = "relay";

    /** Connections relayed since this JVM started, so a test can see the traffic went through. */
    public static final AtomicInteger RELAYED = new AtomicInteger();

    private final LocalLauncher local;
    private final Ledger ledger;
    private final String label;

    RelayLauncher(Ledger ledger, String label) {
        // Its servers are recorded as relay entries; the inner launcher records nothing itself.
        this.local = new LocalLauncher(null, null);
        this.ledger = ledger;
        this.label = label;
    }

    @Override
    public Optional<Refusal> preflight(LaunchSpec spec) throws InterruptedException {
        return local.preflight(spec);
    }

    @Override
    public ServerHandle launch(LaunchSpec spec) throws LaunchException {
        ServerHandle inner = local.launch(spec);
        Ledger.Entry entry = new Ledger.Entry(
                KIND,
                List.of(
                        Long.toString(inner.pid()),
                        Long.toString(ProcessGroups.startTicks(inner.pid())),
                        ProcessGroups.bootId()));
        ledger.add(entry);
        Relay relay;
        try {
            relay = new Relay(inner.endpoint());
        } catch (IOException e) {
            inner.stop();
            ledger.remove(entry);
            throw new UncheckedIOException(e);
        }
        return new Relayed(inner, relay, entry);
    }

    private final class Relayed implements ServerHandle {
        private final ServerHandle inner;
        private final Relay relay;
        private final Ledger.Entry entry;

        Relayed(ServerHandle inner, Relay relay, Ledger.Entry entry) {
            this.inner = inner;
            this.relay = relay;
            this.entry = entry;
        }

        @Override
        public String id() {
            return KIND + ":" + label + ":" + inner.pid();
        }

        @Override
        public Endpoint endpoint() {
            return relay.endpoint;
        }

        @Override
        public Path log() {
            return inner.log();
        }

        @Override
        public Long pid() {
            return inner.pid();
        }

        @Override
        public List<Long> memoryBeforeMib() {
            return inner.memoryBeforeMib();
        }

        @Override
        public Readiness awaitReady() throws InterruptedException {
            return inner.awaitReady();
        }

        @Override
        public boolean isAlive() {
            return inner.isAlive();
        }

        @Override
        public Optional<Termination> awaitExit(Duration limit) throws InterruptedException {
            return inner.awaitExit(limit);
        }

        @Override
        public Optional<Termination> termination() {
            return inner.termination();
        }

        @Override
        public StopReport stop() {
            StopReport report = inner.stop();
            relay.close();
            if (report.leftoverPids().isEmpty()) {
                ledger.remove(entry);
            }
            return report;
        }
    }

    /** Accepts on a port of its own and pipes each connection to the server's endpoint. */
    private static final class Relay {
        private final ServerSocket socket;
        private final Endpoint endpoint;

        Relay(Endpoint target) throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            endpoint = new Endpoint("127.0.0.1", socket.getLocalPort());
            Thread.ofVirtual().start(() -> {
                while (!socket.isClosed()) {
                    try {
                        Socket client = socket.accept();
                        RELAYED.incrementAndGet();
                        Thread.ofVirtual().start(() -> pipe(client, target));
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
        }

        private static void pipe(Socket client, Endpoint target) {
            try (client;
                    Socket server = new Socket()) {
                server.connect(new InetSocketAddress(target.host(), target.port()), 1000);
                Thread up = Thread.ofVirtual().start(() -> copy(client, server));
                copy(server, client);
                up.join();
            } catch (IOException | InterruptedException ended) {
                // The server went away or the client gave up: the relay has nothing more to carry.
            }
        }

        private static void copy(Socket from, Socket to) {
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                in.transferTo(out);
                to.shutdownOutput();
            } catch (IOException ended) {
                // One side closed; the other copy ends on its own.
            }
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Closing a listening socket only fails if it is already closed.
            }
        }
    }

    /** The {@code relay} kind. */
    public static final class Provider implements LauncherProvider {
        private final LauncherProvider local = new LocalLauncher.Provider();

        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Map<String, String> check(Map<String, Object> options) {
            Map<String, String> problems = new LinkedHashMap<>();
            options.forEach((k, v) -> {
                if (!k.equals("label")) {
                    problems.put(k, "the relay launcher takes only 'label'; remove '" + k + "'");
                } else if (!(v instanceof String s) || !s.matches("[a-z0-9]+")) {
                    problems.put(k, "label is a word of lower-case letters and digits, e.g. 'a1'");
                }
            });
            return problems;
        }

        @Override
        public Launcher create(LaunchContext context, Map<String, Object> options) {
            return new RelayLauncher(context.ledger(), String.valueOf(options.getOrDefault("label", "none")));
        }

        @Override
        public Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait) {
            return local.stopLeftover(new Ledger.Entry(LocalLauncher.KIND, entry.fields()), wait);
        }

        @Override
        public List<String> optionNames() {
            return List.of("label");
        }
    }
}
