package dev.ctxprobe.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** A loopback listener that answers one connection as a test scripts it, on a virtual thread of its own. */
final class ScriptedServer implements AutoCloseable {

    /** What the server does with the accepted connection. */
    interface Script {
        void run(Socket s) throws IOException, InterruptedException;
    }

    private final ServerSocket listener;
    private Thread serving;

    ScriptedServer() {
        try {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("no loopback socket for the test server", e);
        }
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Accepts one connection and runs {@code script} on it, then closes it. */
    void answer(Script script) {
        serving = Thread.ofVirtual().start(() -> {
            try (Socket s = listener.accept()) {
                script.run(s);
            } catch (IOException e) {
                // the client closed first: what some tests do on purpose
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @Override
    public void close() throws IOException, InterruptedException {
        listener.close();
        if (serving != null) {
            serving.join(5000);
        }
    }
}
