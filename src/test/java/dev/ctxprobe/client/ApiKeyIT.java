package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** An endpoint that needs a key gets it as a bearer token on every call, and the plan never prints it. */
class ApiKeyIT {

    @Test
    void theKeyIsSentAndNeverPrinted() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/models", ex -> {
            seen.add("models " + ex.getRequestHeaders().getFirst("Authorization"));
            reply(ex, "application/json", "{\"data\":[{\"id\":\"served\"}]}");
        });
        server.createContext("/v1/completions", ex -> {
            ex.getRequestBody().readAllBytes();
            seen.add("completions " + ex.getRequestHeaders().getFirst("Authorization"));
            reply(
                    ex,
                    "text/event-stream",
                    "data: {\"choices\":[{\"index\":0,\"text\":\"x\"}]}\n\n"
                            + "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n");
        });
        server.start();
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            assertThat(ModelDiscovery.firstModelId(base, Duration.ofSeconds(5), "sk-secret"))
                    .isEqualTo("served");
            LoadPlan plan = new LoadPlan(
                    base,
                    "served",
                    10,
                    1,
                    1,
                    1,
                    Double.POSITIVE_INFINITY,
                    0,
                    TokenRange.DEFAULT,
                    Duration.ofSeconds(5),
                    "sk-secret",
                    ReadLimits.forOutput(1));

            LoadResult result = new LoadRunner(plan).run();

            assertThat(result.measured())
                    .singleElement()
                    .satisfies(r -> assertThat(r.ok()).isTrue());
            assertThat(seen).containsExactly("models Bearer sk-secret", "completions Bearer sk-secret");
            assertThat(plan.toString()).doesNotContain("sk-secret");
        } finally {
            server.stop(0);
        }
    }

    private static void reply(com.sun.net.httpserver.HttpExchange ex, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }
}
