package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** {@code ctxprobe serve} as a real child process on the micro model with a 4,096-token context. */
class ServeCommandIT {
    private static final int CTX = 4096;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    static Path logs;

    private static ServeProcess server;
    private static String base;

    @BeforeAll
    static void startServer() throws IOException {
        server = ServeProcess.start(
                logs, "--port", "0", "--ctx-size", String.valueOf(CTX), "--kv-memory", "8MiB", "--threads", "2");
        base = "http://127.0.0.1:" + server.awaitReady();
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        server.close();
    }

    private static HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .header("Content-Type", "application/json")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String ids(int n) {
        // Byte tokens 3..258 are safe fillers.
        return IntStream.range(0, n)
                .mapToObj(i -> String.valueOf(3 + i % 256))
                .collect(Collectors.joining(",", "[", "]"));
    }

    @Test
    void logsCapacityAndReadyLinesExactly() throws IOException {
        assertThat(server.output())
                .contains("ctxprobe-serve: kv capacity 43,690 tokens in 8,388,608 bytes, ctx-size 4,096\n")
                .containsPattern("ctxprobe-serve: ready on http://127\\.0\\.0\\.1:\\d+ \\(ctx-size 4096, model .*"
                        + "ctxprobe-micro-f32-v1\\.gguf\\)\n");
    }

    @Test
    void modelsListsTheContextLength() throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/models")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()))
                .isEqualTo(
                        JSON.readTree("{\"object\":\"list\",\"data\":[{\"id\":\"ctxprobe-micro\",\"object\":\"model\","
                                + "\"owned_by\":\"ctxprobe\",\"max_model_len\":4096}]}"));
        HttpResponse<String> health = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
    }

    @Test
    void idPromptsAreCountedExactlyUpToTheLastFittingLength() throws Exception {
        for (int n : new int[] {1, 17, 1000, CTX - 1}) {
            HttpResponse<String> r = post("/v1/completions", "{\"prompt\":" + ids(n) + ",\"max_tokens\":1}");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode usage = JSON.readTree(r.body()).get("usage");
            assertThat(usage.get("prompt_tokens").asInt())
                    .as("prompt of %d ids", n)
                    .isEqualTo(n);
            assertThat(usage.get("completion_tokens").asInt()).isEqualTo(1);
            assertThat(usage.get("total_tokens").asInt()).isEqualTo(n + 1);
        }
    }

    @Test
    void completionRunsToMaxTokensWithTextPrompts() throws Exception {
        HttpResponse<String> r =
                post("/v1/completions", "{\"prompt\":\"hello world\",\"max_tokens\":7,\"temperature\":0,\"foo\":1}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("object").asString()).isEqualTo("text_completion");
        assertThat(body.get("usage").get("prompt_tokens").asInt())
                .as("one byte token per byte")
                .isEqualTo(11);
        assertThat(body.get("usage").get("completion_tokens").asInt()).isEqualTo(7);
        JsonNode choice = body.get("choices").get(0);
        assertThat(choice.get("text").asString()).hasSize(7);
        assertThat(choice.get("finish_reason").asString()).isEqualTo("length");
    }

    @Test
    void overLongPromptsAreRejectedNeverTruncated() throws Exception {
        HttpResponse<String> whole = post("/v1/completions", "{\"prompt\":" + ids(CTX) + ",\"max_tokens\":1}");
        assertThat(whole.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(whole.body()))
                .isEqualTo(JSON.readTree("{\"error\":{\"message\":\"prompt of 4096 tokens exceeds the context of 4096"
                        + " tokens\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}"));
        HttpResponse<String> withOutput =
                post("/v1/completions", "{\"prompt\":" + ids(CTX - 10) + ",\"max_tokens\":11}");
        assertThat(withOutput.statusCode()).isEqualTo(400);
        assertThat(withOutput.body()).contains("exceeds the context of 4096 tokens", "context_length_exceeded");
    }

    @Test
    void badRequestsGet400WithAMessage() throws Exception {
        assertThat(post("/v1/completions", "{\"prompt\":[5,260]}").body()).contains("out of vocabulary");
        assertThat(post("/v1/completions", "{\"prompt\":[5,-1]}").statusCode()).isEqualTo(400);
        HttpResponse<String> badJson = post("/v1/completions", "{\"prompt\":");
        assertThat(badJson.statusCode()).isEqualTo(400);
        assertThat(badJson.body()).contains("invalid JSON");
        assertThat(post("/v1/completions", "{\"prompt\":[5],\"max_tokens\":0}").statusCode())
                .isEqualTo(400);
        assertThat(post("/v1/completions", "{\"max_tokens\":3}").body()).contains("'prompt' is required");
    }

    @Test
    void streamsOneEventPerTokenThenUsageThenDone() throws Exception {
        HttpResponse<String> r = post(
                "/v1/completions",
                "{\"prompt\":" + ids(300) + ",\"max_tokens\":5,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));
        String[] events = r.body().split("\n\n");
        assertThat(events).hasSize(7);
        for (String e : events) {
            assertThat(e).startsWith("data: ");
        }
        List<JsonNode> chunks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            chunks.add(JSON.readTree(events[i].substring("data: ".length())));
        }
        for (int i = 0; i < 5; i++) {
            JsonNode choice = chunks.get(i).get("choices").get(0);
            assertThat(choice.get("index").asInt()).isZero();
            assertThat(choice.get("text").asString()).hasSize(1);
            assertThat(choice.get("logprobs").isNull()).isTrue();
            assertThat(choice.get("finish_reason").isNull()).isEqualTo(i < 4);
        }
        assertThat(chunks.get(4).get("choices").get(0).get("finish_reason").asString())
                .isEqualTo("length");
        JsonNode usage = chunks.get(5);
        assertThat(usage.get("choices").isEmpty()).isTrue();
        assertThat(usage.get("usage").get("prompt_tokens").asInt()).isEqualTo(300);
        assertThat(usage.get("usage").get("completion_tokens").asInt()).isEqualTo(5);
        assertThat(events[6]).isEqualTo("data: [DONE]");
        assertThat(chunks.stream().map(c -> c.get("id").asString()).distinct()).hasSize(1);
    }

    @Test
    void tokenizeGivesOneByteTokenPerByteWithoutBos() throws Exception {
        HttpResponse<String> r = post("/tokenize", "{\"content\":\"hi there\"}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body())).isEqualTo(JSON.readTree("{\"tokens\":[107,108,259,119,107,104,117,104]}"));
    }

    @Test
    void concurrentRequestsQueueForTheSlotAndAllSucceed() throws Exception {
        List<Thread> threads = new ArrayList<>();
        List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 4; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    statuses.add(post("/v1/completions", "{\"prompt\":" + ids(500) + ",\"max_tokens\":3}")
                            .statusCode());
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(30));
        }
        assertThat(statuses).containsExactly(200, 200, 200, 200);
    }

    @Test
    void refusesAContextOverTheBudgetBeforeLoading() throws Exception {
        try (ServeProcess refused =
                ServeProcess.start(logs, "--port", "0", "--ctx-size", "65792", "--kv-memory", "8MiB")) {
            assertThat(refused.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(refused.process.exitValue()).isEqualTo(3);
            assertThat(refused.output())
                    .contains("ctxprobe-serve: kv capacity 43,690 tokens in 8,388,608 bytes, ctx-size 65,792\n")
                    .contains("ctxprobe-serve: kv budget exceeded: 8,388,608 bytes hold 43,690 tokens, 65,792"
                            + " requested\n")
                    .doesNotContain("llama_model_loader");
        }
    }

    @Test
    void aModelThatIsNotGgufIsAUsageError() throws Exception {
        Path bogus = java.nio.file.Files.writeString(logs.resolve("bogus.gguf"), "nope");
        try (ServeProcess refused = ServeProcess.start(logs, "--port", "0", "--model", bogus.toString())) {
            assertThat(refused.process.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(refused.process.exitValue()).isEqualTo(2);
            assertThat(refused.output()).contains("--model: ", "is not a usable GGUF model: no GGUF magic");
        }
    }

    @Test
    void exitsPromptlyOnSigterm() throws Exception {
        try (ServeProcess other = ServeProcess.start(logs, "--port", "0", "--ctx-size", "512")) {
            other.awaitReady();
            long start = System.nanoTime();
            other.process.destroy();
            await().atMost(Duration.ofSeconds(5)).until(() -> !other.process.isAlive());
            System.out.printf("serve exited %d ms after SIGTERM%n", (System.nanoTime() - start) / 1_000_000);
            assertThat(other.process.isAlive()).isFalse();
        }
    }
}
