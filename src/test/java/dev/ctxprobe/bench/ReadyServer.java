package dev.ctxprobe.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The overhead benchmark's server: waits {@code startupMs}, binds, answers {@code GET /health} with 200 and
 * writes the {@link System#nanoTime()} of the moment it could first answer to a file. On Linux that clock is
 * CLOCK_MONOTONIC, shared by every process, so the launcher's readiness time compares with it. With
 * {@code line}, it then prints uvicorn's ready line, as vLLM and LMDeploy do; with {@code quiet}, a line without it.
 * Arguments: {@code PORT STAMP_FILE STARTUP_MS line|quiet}.
 */
public final class ReadyServer {

    private ReadyServer() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path stamp = Path.of(args[1]);
        // A first server on a port of its own answers one request, so that the real one answers its first as
        // an engine does, not after tens of ms of class loading a real engine has behind it: the stamp then is
        // the moment the real one can answer, and the delay after it is the launcher's alone.
        HttpServer warm = serve(0);
        HttpURLConnection own = (HttpURLConnection)
                URI.create("http://127.0.0.1:" + warm.getAddress().getPort() + "/health")
                        .toURL()
                        .openConnection();
        if (own.getResponseCode() != 200) {
            throw new IllegalStateException("its own /health did not answer 200");
        }
        own.disconnect();
        warm.stop(0);
        Thread.sleep(Long.parseLong(args[2]));
        serve(port);
        long ready = System.nanoTime();
        // Renamed into place: the launcher may see it ready before the stamp is written, and waits for a whole one.
        Path part = stamp.resolveSibling(stamp.getFileName() + ".part");
        Files.writeString(part, Long.toString(ready));
        Files.move(part, stamp, StandardCopyOption.ATOMIC_MOVE);
        System.out.println(
                args[3].equals("line")
                        ? "INFO:     Uvicorn running on http://127.0.0.1:" + port + " (Press CTRL+C to quit)"
                        : "bound at " + ready);
    }

    private static HttpServer serve(int port) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        server.createContext("/health", exchange -> {
            try (exchange) {
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
        return server;
    }
}
