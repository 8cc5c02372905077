package dev.ctxprobe.bench;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The overhead benchmark's server: waits {@code startupMs}, binds, answers {@code GET /health} with 200 and
 * writes the {@link System#nanoTime()} of the moment it could first answer to a file. On Linux that clock is
 * CLOCK_MONOTONIC, shared by every process, so the launcher's readiness time compares with it.
 * Arguments: {@code PORT STAMP_FILE STARTUP_MS}.
 */
public final class ReadyServer {

    private ReadyServer() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path stamp = Path.of(args[1]);
        Thread.sleep(Long.parseLong(args[2]));
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        server.createContext("/health", exchange -> {
            try (exchange) {
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
        long ready = System.nanoTime();
        Files.writeString(stamp, Long.toString(ready));
        System.out.println("ready at " + ready);
    }
}
