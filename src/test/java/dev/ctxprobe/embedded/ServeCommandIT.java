package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
        JsonNode list = JSON.readTree(r.body());
        long created = list.get("data").get(0).get("created").asLong();
        assertThat(created).isBetween(System.currentTimeMillis() / 1000 - 600, System.currentTimeMillis() / 1000);
        assertThat(list)
                .isEqualTo(
                        JSON.readTree("{\"object\":\"list\",\"data\":[{\"id\":\"ctxprobe-micro\",\"object\":\"model\","
                                + "\"created\":" + created + ",\"owned_by\":\"ctxprobe\",\"root\":\"ctxprobe-micro\","
                                + "\"parent\":null,\"max_model_len\":4096,\"meta\":{\"n_vocab\":260,\"n_ctx\":4096,"
                                + "\"n_ctx_train\":1048576,\"n_embd\":32}}]}"));
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
                .isEqualTo(JSON.readTree("{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens."
                        + " However, you requested 4097 tokens (4096 in the prompt, 1 in the completion): with max_tokens 1"
                        + " a prompt can have at most 4095 tokens.\",\"type\":\"BadRequestError\",\"param\":\"prompt\","
                        + "\"code\":400}}"));
        HttpResponse<String> withOutput =
                post("/v1/completions", "{\"prompt\":" + ids(CTX - 10) + ",\"max_tokens\":11}");
        assertThat(withOutput.statusCode()).isEqualTo(400);
        assertThat(error(withOutput).get("message").asString())
                .isEqualTo("This model's maximum context length is 4096 tokens. However, you requested 4097 tokens"
                        + " (4086 in the prompt, 11 in the completion): with max_tokens 11 a prompt can have at most 4085"
                        + " tokens.");
        assertThat(error(withOutput).get("param").asString()).isEqualTo("max_tokens");
        assertThat(post("/v1/completions", "{\"prompt\":" + ids(CTX - 11) + ",\"max_tokens\":11}")
                        .statusCode())
                .as("n_ctx - max_tokens is the longest prompt")
                .isEqualTo(200);
    }

    /** The error object of a response in vLLM's current shape, checked to have exactly its four fields. */
    private static JsonNode error(HttpResponse<String> r) throws IOException {
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode root = JSON.readTree(r.body());
        assertThat(root.propertyNames()).as(r.body()).containsExactly("error");
        JsonNode e = root.get("error");
        assertThat(e.propertyNames()).as(r.body()).containsExactly("message", "type", "param", "code");
        assertThat(e.get("code").asInt()).isEqualTo(r.statusCode());
        return e;
    }

    private static HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .method(method, HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void unknownPathsAndMethodsGetJsonErrorsAsFromVllm() throws Exception {
        for (String path : new String[] {"/", "/v1/chat/completions", "/healthz", "/v1/completions/x", "/tokenizer"}) {
            HttpResponse<String> r = send("GET", path);
            assertThat(r.statusCode()).as(path).isEqualTo(404);
            assertThat(error(r).get("type").asString()).isEqualTo("NotFoundError");
            assertThat(error(r).get("message").asString()).startsWith("Not Found: " + path);
        }
        HttpResponse<String> get = send("GET", "/v1/completions");
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(get.headers().firstValue("Allow")).hasValue("POST");
        assertThat(error(get).get("type").asString()).isEqualTo("MethodNotAllowedError");
        assertThat(send("DELETE", "/v1/models").statusCode()).isEqualTo(405);
    }

    @Test
    void onlyTheServedModelIsAnswered() throws Exception {
        HttpResponse<String> other = post("/v1/completions", "{\"model\":\"gpt-4\",\"prompt\":[5],\"max_tokens\":1}");
        assertThat(other.statusCode()).isEqualTo(404);
        assertThat(error(other).get("message").asString()).isEqualTo("The model `gpt-4` does not exist.");
        assertThat(error(other).get("param").asString()).isEqualTo("model");
        assertThat(post("/v1/completions", "{\"model\":\"ctxprobe-micro\",\"prompt\":[5],\"max_tokens\":1}")
                        .statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/v1/models/ctxprobe-micro").statusCode()).isEqualTo(200);
        assertThat(send("GET", "/v1/models/gpt-4").statusCode()).isEqualTo(404);
    }

    @Test
    void severalChoicesAndBatchesAreRefusedNotAnsweredWithOne() throws Exception {
        HttpResponse<String> n = post("/v1/completions", "{\"prompt\":[5],\"max_tokens\":1,\"n\":2}");
        assertThat(n.statusCode()).isEqualTo(400);
        assertThat(error(n).get("message").asString())
                .isEqualTo("n must be 1: this server runs one completion per request; send 2 requests instead");
        HttpResponse<String> batch = post("/v1/completions", "{\"prompt\":[\"a\",\"b\"],\"max_tokens\":1}");
        assertThat(batch.statusCode()).isEqualTo(400);
        assertThat(error(batch).get("message").asString())
                .isEqualTo("a batch of 2 prompts is not served here: send one prompt per request")
                .doesNotContain("vocabulary");
        assertThat(post("/v1/completions", "{\"prompt\":[[5,6],[7]],\"max_tokens\":1}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(post("/v1/completions", "{\"prompt\":[\"one\"],\"max_tokens\":1}")
                        .statusCode())
                .as("a batch of one is one prompt")
                .isEqualTo(200);
    }

    @Test
    void tokenizeTakesVllmsPromptAndAnswersInItsShape() throws Exception {
        HttpResponse<String> r = post("/tokenize", "{\"model\":\"ctxprobe-micro\",\"prompt\":\"hi there\"}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()))
                .isEqualTo(JSON.readTree("{\"count\":8,\"max_model_len\":4096,"
                        + "\"tokens\":[107,108,259,119,107,104,117,104],\"token_strs\":null}"));
        HttpResponse<String> completion = post("/v1/completions", "{\"prompt\":\"hi there\",\"max_tokens\":1}");
        assertThat(JSON.readTree(completion.body())
                        .get("usage")
                        .get("prompt_tokens")
                        .asInt())
                .as("the count is what a completion of the same text reports")
                .isEqualTo(8);
        assertThat(error(post("/tokenize", "{\"prompt\":5}")).get("param").asString())
                .isEqualTo("prompt");
    }

    @Test
    void anOpenAiBackendFindsTheFrontierWithTheDefaultsWithinTheStatedLimit(@TempDir Path dir) throws Exception {
        // issue 31: the default token ids lay outside this model's vocabulary, and the search spent 4 of 9 steps
        // above the limit the server had stated; then its first step still went to max (65,536) before GET /v1/models
        // was read. Now the endpoint is asked first: max_model_len 4,096 lets prompts of up to 4,095 tokens, and
        // the one aligned target inside that, 3,840, is the whole search.
        Path out = dir.resolve("out");
        RunOutput run = runOpenAi(dir, base.substring(base.lastIndexOf(':') + 1), out);
        assertThat(run.code()).as(run.console()).isZero();
        assertThat(run.console())
                .contains("remote: the endpoint states a context of 4,096 tokens (GET /v1/models); searching up to"
                        + " 4,095");
        JsonNode doc = results(out);
        List<Long> targets = targets(doc);
        assertThat(targets).allSatisfy(t -> assertThat(t).isLessThanOrEqualTo(CTX - 1L));
        assertThat(targets).containsExactly(3_840L);
        assertThat(doc.get("scenarios").get(0).get("outcome").asString()).isEqualTo("ok");
        JsonNode frontier = doc.get("frontier").get("remote");
        assertThat(frontier.get("max_ok_target").asLong()).isEqualTo(3_840L);
        // No aligned target lies between 3,840 and the stated 4,095: the answer is exact without a failed step.
        assertThat(frontier.get("min_failed_target").isNull()).isTrue();
        assertThat(frontier.path("stopped_because").isMissingNode()
                        || frontier.path("stopped_because").isNull())
                .isTrue();
    }

    @Test
    void anOpenAiEndpointThatStatesNoLimitIsSearchedFromMaxAsBefore(@TempDir Path dir) throws Exception {
        // The same server behind a proxy whose GET /v1/models leaves max_model_len out: nothing is known before the
        // first step, so the search starts at max and learns the limit from the refusal.
        HttpServer proxy = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        proxy.createContext("/", ServeCommandIT::forwardWithoutLimit);
        proxy.start();
        try {
            Path out = dir.resolve("out");
            RunOutput run = runOpenAi(dir, String.valueOf(proxy.getAddress().getPort()), out);
            assertThat(run.code()).as(run.console()).isZero();
            assertThat(run.console()).doesNotContain("the endpoint states");
            JsonNode doc = results(out);
            assertThat(targets(doc)).containsExactly(65_536L, 3_840L, 4_096L);
            assertThat(doc.get("frontier").get("remote").get("max_ok_target").asLong())
                    .isEqualTo(3_840L);
            assertThat(doc.get("frontier")
                            .get("remote")
                            .get("min_failed_target")
                            .asLong())
                    .isEqualTo(4_096L);
        } finally {
            proxy.stop(0);
        }
    }

    private record RunOutput(int code, String console) {}

    private static RunOutput runOpenAi(Path dir, String port, Path out) throws IOException {
        Path file = java.nio.file.Files.writeString(dir.resolve("oa.yaml"), """
                experiment: oa
                sweep: {strategy: frontier, frontier: {min: 1024, max: 65536}}
                backends:
                  - name: remote
                    engine: openai
                    port: %s
                """.formatted(port));
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.PrintStream was = System.err;
        java.io.PrintStream wasOut = System.out;
        java.io.PrintStream both = new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8);
        int code;
        try {
            System.setErr(both);
            System.setOut(both);
            code = dev.ctxprobe.cli.Main.execute("run", file.toString(), "--out", out.toString());
        } finally {
            System.setErr(was);
            System.setOut(wasOut);
        }
        return new RunOutput(code, bytes.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static JsonNode results(Path out) throws IOException {
        try (var runs = java.nio.file.Files.list(out.resolve("oa"))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    private static List<Long> targets(JsonNode doc) {
        List<Long> targets = new ArrayList<>();
        doc.get("scenarios").forEach(s -> targets.add(s.get("target_len").asLong()));
        return targets;
    }

    /** Forwards a request to the server, leaving max_model_len out of GET /v1/models. */
    private static void forwardWithoutLimit(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + exchange.getRequestURI()))
                    .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
            String type = exchange.getRequestHeaders().getFirst("Content-Type");
            if (type != null) {
                request.header("Content-Type", type);
            }
            HttpResponse<byte[]> answer = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            byte[] sent = answer.body();
            if (exchange.getRequestURI().getPath().equals("/v1/models") && answer.statusCode() == 200) {
                JsonNode models = JSON.readTree(sent);
                models.get("data").forEach(m -> ((tools.jackson.databind.node.ObjectNode) m).remove("max_model_len"));
                sent = JSON.writeValueAsBytes(models);
            }
            answer.headers()
                    .firstValue("Content-Type")
                    .ifPresent(v -> exchange.getResponseHeaders().set("Content-Type", v));
            exchange.sendResponseHeaders(answer.statusCode(), sent.length == 0 ? -1 : sent.length);
            exchange.getResponseBody().write(sent);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while forwarding", e);
        }
    }

    @Test
    void logprobsAndEchoAreRefusedNotIgnored() throws Exception {
        // issue 31: they were ignored silently; vLLM would serve them, this server says it does not.
        JsonNode logprobs = error(post("/v1/completions", "{\"prompt\":[5],\"max_tokens\":1,\"logprobs\":1}"));
        assertThat(logprobs.get("message").asString())
                .isEqualTo("'logprobs' is not served here: this server returns no log-probabilities; leave it out");
        assertThat(logprobs.get("param").asString()).isEqualTo("logprobs");
        assertThat(error(post("/v1/completions", "{\"prompt\":[5],\"max_tokens\":1,\"echo\":true}"))
                        .get("param")
                        .asString())
                .isEqualTo("echo");
        assertThat(post("/v1/completions", "{\"prompt\":[5],\"max_tokens\":1,\"echo\":false,\"logprobs\":null}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void badRequestsGet400WithAMessage() throws Exception {
        assertThat(error(post("/v1/completions", "{\"prompt\":[5,260]}"))
                        .get("message")
                        .asString())
                .isEqualTo("token id 260 at position 1 is out of vocabulary [0, 260) (GET /v1/models states it as"
                        + " meta.n_vocab)");
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

    @Test
    void aBusyPortIsOneSentenceAndExitCode2() throws Exception {
        int busy = Integer.parseInt(base.substring(base.lastIndexOf(':') + 1));
        try (ServeProcess second = ServeProcess.start(logs, "--port", String.valueOf(busy), "--ctx-size", "512")) {
            assertThat(second.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(second.process.exitValue()).isEqualTo(2);
            assertThat(second.output())
                    .contains("ctxprobe serve: port " + busy + " on 127.0.0.1 is already in use; stop the process"
                            + " holding it or choose another with --port (0 picks a free one)\n")
                    .doesNotContain("Exception", "\tat ", "java.");
        }
    }

    @Test
    void aNativeLibraryThatCannotLoadEndsTheProcessWithItsCause() throws Exception {
        try (ServeProcess broken = ServeProcess.start(
                logs, List.of("-Dde.kherud.llama.tmpdir=/no/such/dir"), "--port", "0", "--ctx-size", "512")) {
            // Before the fix the HTTP server's thread kept the process alive at 503 forever.
            assertThat(broken.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(broken.process.exitValue()).isEqualTo(1);
            assertThat(broken.output())
                    .contains("ctxprobe serve: llama.cpp's native library could not be written to /no/such/dir (no such"
                            + " file or folder); give a writable temp folder in CTXPROBE_JAVA_OPTS, e.g."
                            + " -Djava.io.tmpdir=/var/tmp\n")
                    .doesNotContain("Exception", "\tat ", "ready on");
        }
    }

    @Test
    void parallelServersEachLoadTheirOwnCopyOfTheNativeLibraryAndLeaveNone(@TempDir Path tmp) throws Exception {
        List<ServeProcess> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                servers.add(ServeProcess.start(
                        logs,
                        List.of("-Djava.io.tmpdir=" + tmp),
                        "--port",
                        "0",
                        "--ctx-size",
                        "512",
                        "--threads",
                        "1"));
            }
            for (ServeProcess s : servers) {
                int port = s.awaitReady();
                HttpResponse<String> r = HTTP.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                                .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":[5,6,7],\"max_tokens\":2}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            }
            // The library's own loader extracts every process's copy to <tmpdir>/libjllama.so and deletes it at exit.
            try (var files = java.nio.file.Files.walk(tmp)) {
                assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.contains("jllama")))
                        .as("copies of the native library left in the temp folder while the servers run")
                        .isEmpty();
            }
        } finally {
            for (ServeProcess s : servers) {
                s.close();
            }
        }
    }
}
