package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Port checks before a launch: vLLM binds with SO_REUSEPORT, so a stale server can share a port silently. */
public final class Ports {
    private Ports() {}

    /** True when something accepts connections on the port, or the port cannot be bound. */
    public static boolean busy(String host, int port) {
        String target = connectHost(host);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(target, port), 300);
            return true;
        } catch (IOException refused) {
            // Nobody listens; a bind attempt also catches a socket that is bound but not yet listening.
        }
        try (ServerSocket ss = new ServerSocket()) {
            ss.setReuseAddress(true);
            ss.bind(new InetSocketAddress(host, port));
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** A port that was free a moment ago on the loopback interface. */
    public static int free() {
        try (ServerSocket ss = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return ss.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on the loopback interface", e);
        }
    }

    /** Where to connect to reach a server bound on {@code host}: a wildcard bind is reached on loopback. */
    public static String connectHost(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.isEmpty() ? "127.0.0.1" : host;
    }
}
