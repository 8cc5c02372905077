package dev.ctxprobe.testengine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Starts the test engine as a real process and checks it behaves like the engines it imitates. */
class TestEngineIT {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration PROCESS_WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<Process> engines = new ArrayList<>();
    private final List<Long> strayPids = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();

    @AfterEach
    void killEverythingStarted() throws InterruptedException {
        http.close();
        for (Process engine : engines) {
            engine.descendants().forEach(ProcessHandle::destroyForcibly);
            engine.destroyForcibly();
            assertThat(engine.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isTrue();
        }
        for (long pid : strayPids) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void vllmRefusesAMaxModelLenAboveItsKvCapacityWithExitCodeOne() throws Exception {
        Engine engine = launch("--max-model-len", "2048", "--capacity", "1000");

        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isEqualTo(1);
        assertThat(engine.log())
                .contains("ValueError: To serve at least one request with the models's max seq len (2048), (0.25 GiB"
                        + " KV cache is needed, which is larger than the available KV cache memory (0.12 GiB). Based"
                        + " on the available memory, the estimated maximum model length is 1000. Try increasing")
                .doesNotContain("Application startup complete");
    }

    @Test
    void vllmStreamsOneEventPerTokenThenUsageThenDone() throws Exception {
        Engine engine = launch("--max-model-len", "4096", "--capacity", "10000", "--itl-ms", "1");
        awaitReady(engine);

        HttpResponse<String> response = post(engine, completion(100, 3, true), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/event-stream"));
        assertThat(response.headers().firstValue("X-Engine-Prefill-Ms")).hasValue("0.200");
        assertThat(response.body()).endsWith("data: [DONE]\n\n");
        List<String> events = Arrays.asList(response.body().split("\n\n"));
        assertThat(events).hasSize(5).allSatisfy(event -> assertThat(event).startsWith("data: "));
        List<JsonNode> chunks =
                events.subList(0, 4).stream().map(TestEngineIT::data).toList();
        assertThat(chunks.subList(0, 3))
                .extracting(chunk -> chunk.path("choices").path(0).path("text").asString())
                .containsExactly("a", "a", "a");
        assertThat(chunks.subList(0, 3))
                .extracting(chunk ->
                        chunk.path("choices").path(0).path("finish_reason").asString(null))
                .containsExactly(null, null, "length");
        JsonNode usageChunk = chunks.get(3);
        assertThat(usageChunk.path("object").asString()).isEqualTo("text_completion");
        assertThat(usageChunk.path("choices").isArray()).isTrue();
        assertThat(usageChunk.path("choices").size()).isZero();
        assertThat(usageChunk.path("usage").path("prompt_tokens").asInt()).isEqualTo(100);
        assertThat(usageChunk.path("usage").path("completion_tokens").asInt()).isEqualTo(3);
        assertThat(usageChunk.path("usage").path("total_tokens").asInt()).isEqualTo(103);
        assertThat(events.get(4)).isEqualTo("data: [DONE]");
        assertThat(engine.log())
                .contains("GPU KV cache size: 10,000 tokens")
                .contains("Maximum concurrency for 4,096 tokens per request: 2.44x");
    }

    @Test
    void vllmRejectsARequestAboveMaxModelLenWithItsErrorBody() throws Exception {
        Engine engine = launch("--max-model-len", "64");
        awaitReady(engine);

        HttpResponse<String> fits = post(engine, completion(63, 1, false), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> tooLong = post(engine, completion(64, 1, true), HttpResponse.BodyHandlers.ofString());

        assertThat(fits.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(fits.body())
                        .path("usage")
                        .path("prompt_tokens")
                        .asInt())
                .isEqualTo(63);
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body())
                .isEqualTo("{\"object\":\"error\",\"message\":\"This model's maximum context length is 64 tokens."
                        + " However, you requested 65 tokens (64 in the messages, 1 in the completion). Please reduce"
                        + " the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,"
                        + "\"code\":400}");
    }

    @Test
    void sglangPutsTheLengthErrorInsideA200Stream() throws Exception {
        Engine engine = launch("--mode", "sglang", "--context-length", "1000", "--capacity", "500");
        awaitReady(engine);

        HttpResponse<String> longest = post(engine, completion(493, 1, true), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> streamed = post(engine, completion(494, 1, true), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> plain = post(engine, completion(494, 1, false), HttpResponse.BodyHandlers.ofString());
        JsonNode info = JSON.readTree(get(engine, "/get_server_info").body());

        assertThat(longest.statusCode()).isEqualTo(200);
        assertThat(longest.body()).contains("\"prompt_tokens\":493").doesNotContain("error");
        String message = "Input length (494 tokens) exceeds the maximum allowed length (494 tokens). Use a shorter"
                + " input or enable --allow-auto-truncate.";
        assertThat(streamed.statusCode()).isEqualTo(200);
        assertThat(streamed.body())
                .isEqualTo("data: {\"error\": {\"message\": \"" + message
                        + "\", \"type\": \"BadRequestError\", \"code\": 400}}\n\ndata: [DONE]\n\n");
        assertThat(plain.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(plain.body()).path("message").asString()).isEqualTo(message);
        assertThat(info.path("max_total_num_tokens").asInt()).isEqualTo(500);
        assertThat(info.path("max_req_input_len").asInt()).isEqualTo(494);
        assertThat(engine.log())
                .contains("max_total_num_tokens=500, chunked_prefill_size=8192, max_prefill_tokens=16384,"
                        + " max_running_requests=250, context_len=1000")
                .contains("The server is fired up and ready to roll!");
    }

    @Test
    void llamacppAnswers503WhileLoadingThen200AndRejectsAFullContext() throws Exception {
        // The current build rounds -c up to a multiple of 256 and serves at most n_ctx - 1 prompt tokens.
        Engine engine = launch("--mode", "llamacpp", "-c", "200", "--startup-ms", "2000");

        HttpResponse<String> loading = await().atMost(PROCESS_WAIT)
                .pollInterval(Duration.ofMillis(20))
                .failFast("the engine exited", () -> !engine.process.isAlive())
                .until(() -> tryGet(engine, "/health"), Optional::isPresent)
                .orElseThrow();
        awaitReady(engine);
        HttpResponse<String> ready = get(engine, "/health");
        HttpResponse<String> tooLong = post(engine, completion(256, 1, true), HttpResponse.BodyHandlers.ofString());

        assertThat(loading.statusCode()).isEqualTo(503);
        assertThat(loading.body())
                .isEqualTo("{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}");
        assertThat(ready.body()).isEqualTo("{\"status\":\"ok\"}");
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body())
                .isEqualTo("{\"error\":{\"code\":400,\"message\":\"request (256 tokens) exceeds the available context"
                        + " size (256 tokens), try increasing it\",\"type\":\"exceed_context_size_error\","
                        + "\"n_prompt_tokens\":256,\"n_ctx\":256}}");
        assertThat(engine.log()).contains("n_slots = 4, n_ctx_slot = 256, kv_unified = 'true'");
    }

    @Test
    void sigtermEndsTheEngineWithExitCodeZero() throws Exception {
        Engine engine = launch();
        awaitReady(engine);

        engine.process.destroy();

        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isZero();
    }

    @Test
    void leaveChildLeavesALiveProcessAfterTheEngineExits() throws Exception {
        Engine engine = launch("--fault", "leave-child");
        Pattern childLine = Pattern.compile("child pid (\\d+)");
        long childPid = await().atMost(PROCESS_WAIT)
                .until(() -> childLine.matcher(engine.log()), Matcher::find)
                .group(1)
                .transform(Long::parseLong);
        strayPids.add(childPid);
        awaitReady(engine);

        engine.process.destroy();

        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isZero();
        ProcessHandle child = ProcessHandle.of(childPid).orElseThrow();
        assertThat(child.isAlive()).isTrue();
        child.destroyForcibly();
        assertThat(child.onExit()
                        .get(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS)
                        .isAlive())
                .isFalse();
    }

    @Test
    void ignoreSigtermSurvivesTermUntilKill() throws Exception {
        Engine engine = launch("--fault", "ignore-sigterm");
        awaitReady(engine);

        engine.process.destroy();
        await().atMost(PROCESS_WAIT).until(() -> engine.log().contains("Received SIGTERM, ignoring it"));

        assertThat(engine.process.waitFor(300, TimeUnit.MILLISECONDS)).isFalse();
        assertThat(get(engine, "/health").statusCode()).isEqualTo(200);
        engine.process.destroyForcibly();
        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isEqualTo(137);
    }

    @Test
    void crashMidRequestKillsTheEngineWithCode137() throws Exception {
        Engine engine = launch("--fault", "crash-mid-request");
        awaitReady(engine);

        assertThatThrownBy(() -> post(engine, completion(10, 1, true), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);

        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isEqualTo(137);
    }

    @Test
    void hangAfterHeadersSendsStreamHeadersBeforeAnyEvent() throws Exception {
        Engine engine = launch("--fault", "hang-after-headers");
        awaitReady(engine);

        HttpResponse<InputStream> response =
                post(engine, completion(10, 1, true), HttpResponse.BodyHandlers.ofInputStream());

        try (InputStream body = response.body()) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("text/event-stream"));
            assertThat(body.available()).isZero();
        }
    }

    @Test
    void closeMidStreamBreaksTheConnectionAfterAPartialEvent() throws Exception {
        Engine engine = launch("--fault", "close-mid-stream");
        awaitReady(engine);

        assertThatThrownBy(() -> post(engine, completion(10, 1, true), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
        assertThat(engine.process.isAlive()).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("startupFailures")
    void startupFailuresExitWithTheEnginesCodeAndWords(String args, int exitCode, String words) throws Exception {
        Engine engine = launch(args.split(" "));

        assertThat(engine.process.waitFor(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS))
                .isTrue();
        assertThat(engine.process.exitValue()).isEqualTo(exitCode);
        assertThat(engine.log()).contains(words);
    }

    static Stream<Arguments> startupFailures() {
        return Stream.of(
                Arguments.of(
                        "--fault exit-at-once", 1, "RuntimeError: Engine core initialization failed. See root cause"),
                Arguments.of(
                        "--fault oom-startup",
                        1,
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
                Arguments.of("--fault bad-args", 2, "error: argument --max-model-len: invalid int value"),
                Arguments.of(
                        "--max-model-len 29000 --refuse-at 20000,29000",
                        1,
                        "the estimated maximum model length is 28999. Try increasing"),
                Arguments.of("--mode llamacpp -c 2048 --capacity 1000", 1, "failed to allocate buffer for kv cache"),
                Arguments.of(
                        "--mode tgi --max-total-tokens 2048 --capacity 1000",
                        1,
                        "`max_total_tokens` must be <= `max_batch_total_tokens`. Given: 2048 and 1000"),
                Arguments.of("--no-such-flag 1", 2, "unrecognized argument: --no-such-flag"));
    }

    @Test
    void neverReadyBindsButAnswers503() throws Exception {
        Engine engine = launch("--fault", "never-ready");
        await().atMost(PROCESS_WAIT).until(() -> engine.log().contains("Waiting for the scheduler"));

        assertThat(get(engine, "/health").statusCode()).isEqualTo(503);
        assertThat(get(engine, "/v1/models").statusCode()).isEqualTo(503);
    }

    @Test
    void lmdeployAnswersAnOverlongPromptWithAnEmpty200() throws Exception {
        Engine engine = launch("--mode", "lmdeploy", "--session-len", "64");
        awaitReady(engine, "/v1/models");

        HttpResponse<String> response = post(engine, completion(64, 1, false), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("choices").path(0).path("text").asString()).isEmpty();
        assertThat(body.path("choices").path(0).path("finish_reason").asString())
                .isEqualTo("length");
        assertThat(body.path("usage").path("completion_tokens").asInt()).isZero();
        assertThat(body.path("usage").path("prompt_tokens").asInt()).isEqualTo(64);
    }

    @Test
    void tgiRejectsAnOverlongRequestWith422() throws Exception {
        Engine engine = launch("--mode", "tgi", "--max-total-tokens", "64", "--capacity", "100");
        awaitReady(engine);

        HttpResponse<String> response = post(engine, completion(64, 1, true), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(422);
        assertThat(response.body())
                .isEqualTo("{\"error\":\"Input validation error: inputs tokens + max_new_tokens must be <= 64. Given:"
                        + " 64 inputs tokens and 1 max_new_tokens\",\"error_type\":\"validation\"}");
        assertThat(engine.log()).contains("Setting max batch total tokens to 100");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"truncate, 300, 256", "bos, 40, 41"})
    void promptTokenFaultsReportAnotherCountThanSent(String fault, int sent, int reported) throws Exception {
        Engine engine = launch("--mode", "llamacpp", "-c", "256", "--capacity", "256", "--fault", fault);
        awaitReady(engine);

        HttpResponse<String> response = post(engine, completion(sent, 2, true), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"usage\":{\"prompt_tokens\":" + reported + ",");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "error-event|data: {\"error\": {\"message\": \"Internal server error",
                "garbage-stream|<html><body>502 Bad Gateway"
            })
    void streamFaultsAnswer200WithoutChoiceEvents(String fault, String bodyStart) throws Exception {
        Engine engine = launch("--fault", fault);
        awaitReady(engine);

        HttpResponse<String> response = post(engine, completion(10, 1, true), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).startsWith(bodyStart).doesNotContain("\"choices\"");
    }

    /** A started engine: the process, its port and its log file. */
    private record Engine(Process process, int port, Path logFile) {
        URI uri(String path) {
            return URI.create("http://127.0.0.1:" + port + path);
        }

        String log() throws IOException {
            return Files.readString(logFile);
        }
    }

    private Engine launch(String... args) throws IOException {
        int port = TestEngines.freePort();
        Path log = dir.resolve("engine-" + engines.size() + ".log");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--port", Integer.toString(port)));
        Process process = TestEngines.start(log, all.toArray(String[]::new));
        engines.add(process);
        return new Engine(process, port, log);
    }

    private void awaitReady(Engine engine) {
        awaitReady(engine, "/health");
    }

    private void awaitReady(Engine engine, String path) {
        await().atMost(PROCESS_WAIT)
                .pollInterval(Duration.ofMillis(20))
                .failFast("the engine exited", () -> !engine.process.isAlive())
                .until(() -> tryGet(engine, path)
                        .map(HttpResponse::statusCode)
                        .orElse(-1)
                        .equals(200));
    }

    /** Empty while nothing listens on the port yet. */
    private Optional<HttpResponse<String>> tryGet(Engine engine, String path) throws InterruptedException {
        try {
            return Optional.of(get(engine, path));
        } catch (IOException notListening) {
            return Optional.empty();
        }
    }

    private HttpResponse<String> get(Engine engine, String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(engine.uri(path))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Bounded as a whole: the client's own timeout stops at the headers, and some faults never end the body. */
    private <T> HttpResponse<T> post(Engine engine, String body, BodyHandler<T> handler)
            throws IOException, InterruptedException, TimeoutException {
        HttpRequest request = HttpRequest.newBuilder(engine.uri("/v1/completions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            return http.sendAsync(request, handler).get(PROCESS_WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IllegalStateException("request failed", e);
        }
    }

    /** The request body ctxprobe sends: token ids, streaming with usage, ignore_eos, greedy. */
    private static String completion(int promptLen, int maxTokens, boolean stream) {
        String ids = IntStream.range(0, promptLen)
                .mapToObj(i -> Integer.toString(1000 + i))
                .collect(Collectors.joining(","));
        return "{\"model\":\"test-model\",\"prompt\":[" + ids + "],\"max_tokens\":" + maxTokens + ",\"stream\":"
                + stream + ",\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true,\"temperature\":0}";
    }

    private static JsonNode data(String event) {
        return JSON.readTree(event.substring("data: ".length()));
    }
}
