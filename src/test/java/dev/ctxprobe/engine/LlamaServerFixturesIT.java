package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ctxprobe.embedded.ByteVocab;
import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.testsupport.LlamaServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Starts the real llama-server and checks that what the recorded fixtures ({@code engine/llamacpp/b11669-*}, see
 * the README there) claim still holds for the installed build: the profile is fixed against those texts, so a
 * Debian update that changes them must fail here, naming the text, rather than mislead the profile silently.
 */
class LlamaServerFixturesIT {
    private static final String FIXTURES = "/dev/ctxprobe/engine/llamacpp/";
    private static final String RECORDED = "b11669-";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration READY = Duration.ofSeconds(60);
    private static final Duration STOP = Duration.ofSeconds(10);
    private static final Pattern SLOTS =
            Pattern.compile("load_model: initializing, n_slots = (\\d+), n_ctx_slot = (\\d+), kv_unified = '(\\w+)'");
    private static final Pattern TOO_LONG = Pattern.compile(
            "request \\((\\d+) tokens\\) exceeds the available context size \\((\\d+) tokens\\), try increasing it");
    private static final int FILLER = ByteVocab.byteToken('A');

    @TempDir
    static Path logs;

    /** {@code -c 8192 -np 1}: the server every request test talks to. */
    private static LlamaServer server;

    @BeforeAll
    static void startServer() throws Exception {
        LlamaServer.require();
        server = LlamaServer.start(logs, "-m", micro(), "-c", "8192", "-np", "1");
        server.awaitReady(READY);
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void startupLineNamesSlotsAndTheirContext() throws Exception {
        assertSlots(fixture("startup-np1.log"), 1, 8192, "false");
        assertSlots(server.outputOnceItHas("n_ctx_slot"), 1, 8192, "false");
        assertSlots(fixture("startup-default-np.log"), 4, 8192, "true");
        assertSlots(fixture("startup-np2-no-kv-unified.log"), 2, 4096, "false");
    }

    @Test
    void contextIsRoundedUpTo256AndSplitAcrossSlotsWithoutUnifiedKv() throws Exception {
        assertSlots(fixture("startup-c-rounded.log"), 1, 5120, "false");
        try (LlamaServer split = LlamaServer.start(logs, "-m", micro(), "-c", "5000", "-np", "2", "--no-kv-unified")) {
            split.awaitReady(READY);
            assertSlots(split.outputOnceItHas("n_ctx_slot"), 2, 2560, "false");
            HttpResponse<String> r = split.post("/v1/completions", completion(2560, 1, false));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            assertThat(JSON.readTree(r.body()).get("error").get("n_ctx").asInt())
                    .isEqualTo(2560);
            assertThat(split.stop(STOP)).isZero();
        }
    }

    @Test
    void healthSaysOkWhenReady() throws Exception {
        HttpResponse<String> r = server.get("/health");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree(body(fixture("health-ready.http"))));
        assertThat(status(fixture("health-loading.http"))).isEqualTo(503);
        JsonNode loading = JSON.readTree(body(fixture("health-loading.http"))).get("error");
        assertThat(loading.get("message").asString()).isEqualTo("Loading model");
        assertThat(loading.get("type").asString()).isEqualTo("unavailable_error");
    }

    @Test
    void modelsListNamesVocabularyAndTrainingContext() throws Exception {
        HttpResponse<String> r = server.get("/v1/models");
        assertThat(r.statusCode()).isEqualTo(200);
        for (String text : List.of(r.body(), body(fixture("v1-models.http")))) {
            JsonNode meta = JSON.readTree(text).get("data").get(0).get("meta");
            assertThat(meta.get("n_vocab").asInt()).as(text).isEqualTo(ByteVocab.SIZE);
            assertThat(meta.get("n_ctx_train").asLong()).as(text).isEqualTo(ModelShape.DEMO_CONTEXT_LENGTH);
            assertThat(meta.get("n_ctx").asInt()).as(text).isEqualTo(8192);
        }
    }

    @Test
    void promptOfNCtxTokensIsRefusedWithBothNumbersStreamingOrNot() throws Exception {
        JsonNode recorded = JSON.readTree(body(fixture("prompt-at-n-ctx.http"))).get("error");
        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> r = server.post("/v1/completions", completion(8192, 1, stream));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
            JsonNode error = JSON.readTree(r.body()).get("error");
            assertThat(keys(error)).isEqualTo(keys(recorded));
            assertThat(error.get("type").asString()).isEqualTo("exceed_context_size_error");
            assertThat(error.get("n_prompt_tokens").asInt()).isEqualTo(8192);
            assertThat(error.get("n_ctx").asInt()).isEqualTo(8192);
            Matcher m = TOO_LONG.matcher(error.get("message").asString());
            assertThat(m.matches()).as(error.get("message").asString()).isTrue();
            assertThat(m.group(1) + "/" + m.group(2)).isEqualTo("8192/8192");
        }
        assertThat(status(fixture("prompt-too-long-stream.http"))).isEqualTo(400);
    }

    @Test
    void longestServedPromptIsOneBelowNCtx() throws Exception {
        HttpResponse<String> r = server.post("/v1/completions", completion(8191, 1, false));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).get("usage").get("prompt_tokens").asInt())
                .isEqualTo(8191);
    }

    @Test
    void idsOutsideTheVocabularyAreRefused() throws Exception {
        String recorded = JSON.readTree(body(fixture("invalid-token.http")))
                .get("error")
                .get("message")
                .asString();
        assertThat(recorded).isEqualTo("Prompt contains invalid tokens");
        HttpResponse<String> r =
                server.post("/v1/completions", "{\"prompt\":[" + FILLER + "," + ByteVocab.SIZE + "],\"max_tokens\":1}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).get("error").get("message").asString())
                .isEqualTo(recorded);
    }

    @Test
    void sigtermEndsAnIdleServerWithExitCodeZero() throws Exception {
        assertThat(lastLine(fixture("startup-np1.log"))).endsWith("cleaning up before exit...");
        try (LlamaServer s = LlamaServer.start(logs, "-m", micro(), "-c", "4096", "-np", "1")) {
            s.awaitReady(READY);
            assertThat(s.stop(STOP)).isZero();
            assertThat(lastLine(s.output())).endsWith("cleaning up before exit...");
        }
    }

    /**
     * The recorded build stops working on SIGTERM but does not exit while a request's client stays connected: a
     * stop must not wait for the server alone (close the client, or escalate to SIGKILL).
     */
    @Test
    void sigtermDuringARequestLeavesTheServerRunningUntilTheClientCloses() throws Exception {
        assertThat(fixture("sigterm-during-prefill.log"))
                .contains("cleaning up before exit...")
                .contains("stop: cancel task");
        try (LlamaServer s = LlamaServer.start(logs, "-m", micro(), "-c", "131072", "-np", "1")) {
            s.awaitReady(READY);
            byte[] body = completion(100_000, 1, false).getBytes(StandardCharsets.US_ASCII);
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), s.port())) {
                OutputStream out = client.getOutputStream();
                out.write(("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                + "Content-Length: " + body.length + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(body);
                out.flush();
                await().atMost(READY).until(() -> s.output().contains("processing task"));
                ProcessHandle server = ProcessHandle.of(s.pid()).orElseThrow();
                server.destroy();
                await().atMost(STOP).until(() -> s.output().contains("cleaning up before exit"));
                // The prefill of 100,000 tokens is abandoned, yet the process stays while the client waits.
                assertThat(server.onExit()
                                .completeOnTimeout(null, 2, TimeUnit.SECONDS)
                                .get())
                        .as("llama-server exited on SIGTERM with a client waiting:\n%s", s.output())
                        .isNull();
            }
            int code = s.awaitExit(STOP);
            assertThat(s.output()).contains("stop: cancel task");
            assertThat(code).as(s.output()).isZero();
        }
    }

    @Test
    void portAlreadyTakenEndsTheStartAtOnce() throws Exception {
        LlamaServer.Exit exit = LlamaServer.runToExit(
                logs, 0, STOP, "-m", micro(), "--host", "127.0.0.1", "--port", Integer.toString(server.port()));
        assertThat(exit.code()).isEqualTo(1);
        String line = "couldn't bind HTTP server socket, hostname: 127.0.0.1, port: ";
        assertThat(fixture("port-taken.log")).contains(line + "18080");
        assertThat(exit.output()).contains(line + server.port()).contains("exiting due to HTTP server error");
    }

    @Test
    void badFlagAndBadValueAreRefusedWithExitCodeOne() throws Exception {
        LlamaServer.Exit flag = LlamaServer.runToExit(logs, 0, STOP, "--no-such-flag");
        assertThat(flag.code()).isEqualTo(1);
        assertThat(firstLine(flag.output()))
                .isEqualTo(firstLine(fixture("bad-flag.log")))
                .isEqualTo("error: invalid argument: --no-such-flag");
        LlamaServer.Exit value = LlamaServer.runToExit(logs, 0, STOP, "-t", "abc");
        assertThat(value.code()).isEqualTo(1);
        assertThat(firstLine(value.output()))
                .isEqualTo(firstLine(fixture("bad-value.log")))
                .isEqualTo("error while handling argument \"-t\": stoi");
    }

    @Test
    void kvCacheTooLargeForMemoryFailsTheStartNamingTheKvCache() throws Exception {
        String recorded = fixture("kv-alloc-fail.log");
        // 4,000,000 tokens of the mini model's KV (1024 bytes each) cannot be mapped under a 2 GB limit.
        LlamaServer.Exit exit = LlamaServer.runToExit(
                logs,
                2_000_000,
                Duration.ofSeconds(60),
                "-m",
                LlamaServer.model(ModelShape.MINI).toString(),
                "-c",
                "4000000",
                "-fit",
                "off");
        assertThat(exit.code()).isEqualTo(1);
        for (String text : List.of(recorded, exit.output())) {
            assertThat(text)
                    .as(text)
                    .containsPattern("ggml_aligned_malloc: insufficient memory \\(attempted to allocate [\\d.]+ MB\\)")
                    .contains("llama_init_from_model: failed to initialize the context: failed to allocate buffer"
                            + " for kv cache")
                    .contains("llama_server: exiting due to model loading error");
        }
        assertThat(exit.output()).contains("attempted to allocate 3906.25 MB");
    }

    private static String micro() throws IOException {
        return LlamaServer.model(ModelShape.MICRO).toString();
    }

    private static void assertSlots(String log, int slots, int nCtxSlot, String kvUnified) {
        Matcher m = SLOTS.matcher(log);
        assertThat(m.find()).as("no n_ctx_slot line in:\n%s", log).isTrue();
        assertThat(List.of(m.group(1), m.group(2), m.group(3)))
                .as(m.group())
                .containsExactly(Integer.toString(slots), Integer.toString(nCtxSlot), kvUnified);
    }

    private static String completion(int tokens, int maxTokens, boolean stream) {
        String ids = IntStream.range(0, tokens)
                .mapToObj(i -> Integer.toString(FILLER))
                .collect(Collectors.joining(","));
        return "{\"prompt\":[" + ids + "],\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + "}";
    }

    private static String fixture(String name) throws IOException {
        try (InputStream in = LlamaServerFixturesIT.class.getResourceAsStream(FIXTURES + RECORDED + name)) {
            assertThat(in).as("fixture " + RECORDED + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The status code of a recorded {@code curl -i} response. */
    private static int status(String http) {
        return Integer.parseInt(http.lines().findFirst().orElseThrow().split(" ")[1]);
    }

    /** The body of a recorded {@code curl -i} response. */
    private static String body(String http) {
        int end = http.indexOf("\r\n\r\n");
        assertThat(end).as("no end of headers in:\n%s", http).isPositive();
        return http.substring(end + 4);
    }

    private static List<String> keys(JsonNode node) {
        List<String> names = new ArrayList<>(node.propertyNames());
        Collections.sort(names);
        return names;
    }

    private static String firstLine(String text) {
        return text.lines().findFirst().orElse("");
    }

    private static String lastLine(String text) {
        return text.strip().lines().reduce((a, b) -> b).orElse("");
    }
}
