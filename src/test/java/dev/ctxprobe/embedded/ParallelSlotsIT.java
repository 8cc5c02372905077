package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.ServedCapacity;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code ctxprobe serve --parallel 4} as a real child process: four slots of 1,024 tokens of a 4,096-token context,
 * stated as llama-server states them, decoding four requests together, refusing a request longer than a slot.
 */
class ParallelSlotsIT {
    private static final int CTX = 4096;
    private static final int SLOTS = 4;
    private static final int SLOT_CTX = CTX / SLOTS;
    private static final int OUTPUT = 16;
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
                logs,
                "--port",
                "0",
                "--ctx-size",
                String.valueOf(CTX),
                "--parallel",
                String.valueOf(SLOTS),
                "--kv-memory",
                "8MiB",
                "--threads",
                "2");
        base = "http://127.0.0.1:" + server.awaitReady();
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        server.close();
    }

    private static String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    /** A prompt of {@code n} byte-token ids, distinct for each {@code seed}, so no two requests share a prefix. */
    private static String ids(int n, int seed) {
        return IntStream.range(0, n)
                .mapToObj(i -> String.valueOf(3 + (seed * 37 + i) % 256))
                .collect(Collectors.joining(",", "[", "]"));
    }

    @Test
    void statesItsSlotsInLlamaServersWords() throws Exception {
        assertThat(server.output())
                .contains("ctxprobe-serve: initializing, n_slots = 4, n_ctx_slot = 1024, kv_unified = 'false'\n");
        JsonNode props = JSON.readTree(get("/props"));
        assertThat(props.get("total_slots").asInt()).isEqualTo(SLOTS);
        assertThat(props.get("default_generation_settings").get("n_ctx").asInt())
                .isEqualTo(SLOT_CTX);
        JsonNode slots = JSON.readTree(get("/slots"));
        assertThat(slots).hasSize(SLOTS);
        slots.forEach(s -> assertThat(s.get("n_ctx").asInt()).isEqualTo(SLOT_CTX));
        JsonNode card = JSON.readTree(get("/v1/models")).get("data").get(0);
        assertThat(card.get("max_model_len").asInt()).isEqualTo(SLOT_CTX);
        assertThat(card.get("meta").get("n_ctx").asInt()).isEqualTo(CTX);
    }

    @Test
    void theEmbeddedProfileRecordsTheSlotsAStepStates() throws Exception {
        List<String> log = server.output().lines().toList();
        ServedCapacity stated = Engines.profile("embedded").statedCapacity(log, path -> {
            try {
                return get(path);
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        });

        assertThat(stated.slots()).isEqualTo(SLOTS);
        assertThat(stated.contextTokens()).isEqualTo(SLOT_CTX);
        assertThat(stated.maxPromptTokens()).isEqualTo(SLOT_CTX - 1);
        assertThat(stated.kvUnified()).isFalse();
        assertThat(stated.sources()).contains("GET /props", "log");
    }

    /** One streamed request's times, from the send: its first token and its last, and the prompt it reported. */
    private record Timed(int status, long firstNanos, long lastNanos, int promptTokens, int tokens) {}

    private static Timed stream(int promptLen, int seed, long t0) throws IOException, InterruptedException {
        HttpResponse<java.io.InputStream> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"prompt\": " + ids(promptLen, seed)
                                + ", \"max_tokens\": " + OUTPUT + ", \"stream\": true,"
                                + " \"stream_options\": {\"include_usage\": true}}"))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        long first = -1;
        long last = -1;
        int tokens = 0;
        int prompt = -1;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.startsWith("data: ") || line.equals("data: [DONE]")) {
                    continue;
                }
                JsonNode event = JSON.readTree(line.substring(6));
                if (event.path("choices").size() > 0) {
                    long now = System.nanoTime() - t0;
                    first = first < 0 ? now : first;
                    last = now;
                    tokens++;
                }
                if (event.hasNonNull("usage")) {
                    prompt = event.get("usage").get("prompt_tokens").asInt();
                }
            }
        }
        return new Timed(r.statusCode(), first, last, prompt, tokens);
    }

    @Test
    void fourRequestsThatFitASlotAreDecodedTogether() throws Exception {
        int prompt = SLOT_CTX - OUTPUT;
        List<Timed> done = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(SLOTS)) {
            CountDownLatch go = new CountDownLatch(1);
            long t0 = System.nanoTime();
            List<Future<Timed>> sent = new ArrayList<>();
            for (int i = 0; i < SLOTS; i++) {
                int seed = i;
                sent.add(pool.submit(() -> {
                    go.await();
                    return stream(prompt, seed, t0);
                }));
            }
            go.countDown();
            for (Future<Timed> f : sent) {
                done.add(f.get(120, TimeUnit.SECONDS));
            }
        }

        done.forEach(t -> {
            assertThat(t.status()).isEqualTo(200);
            assertThat(t.promptTokens()).isEqualTo(prompt);
            assertThat(t.tokens()).isEqualTo(OUTPUT);
        });
        // Held at once (docs/search.md#held-at-once): the last first token came before the first request finished.
        long lastFirst = done.stream().mapToLong(Timed::firstNanos).max().orElseThrow();
        long firstDone = done.stream().mapToLong(Timed::lastNanos).min().orElseThrow();
        assertThat(lastFirst).as(done.toString()).isLessThan(firstDone);
    }

    @Test
    void aRequestLongerThanASlotIsRefusedWithTheSlotsContext() throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/completions"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"prompt\": " + ids(SLOT_CTX - OUTPUT + 1, 0) + ", \"max_tokens\": " + OUTPUT + "}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).isEqualTo(400);
        String message = JSON.readTree(r.body()).get("error").get("message").asString();
        assertThat(message)
                .startsWith("This model's maximum context length is 1024 tokens. However, you requested 1025 tokens")
                .contains("Each of the 4 slots holds n_ctx_slot = 1024 of the 4096 tokens of n_ctx");
        // The profile reads the slot's context as the limit, as for one slot.
        assertThat(Engines.profile("embedded")
                        .diagnoseResponse(400, r.body())
                        .named()
                        .limit()
                        .tokens())
                .isEqualTo(SLOT_CTX);
    }

    @Test
    void slotsTheContextCannotHoldAreAUsageError() throws Exception {
        for (String[] bad : List.of(new String[] {"--parallel", "0"}, new String[] {"--parallel", "-2"}, new String[] {
            "--ctx-size", "64", "--parallel", "33"
        })) {
            ServeProcess p = ServeProcess.start(logs, bad);
            assertThat(p.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String out = p.output();
            assertThat(p.process.exitValue()).as(out).isEqualTo(2);
            assertThat(out).doesNotContain("Exception").contains("--parallel");
        }
        ServeProcess tooMany = ServeProcess.start(logs, "--ctx-size", "64", "--parallel", "33");
        tooMany.process.waitFor(60, TimeUnit.SECONDS);
        assertThat(tooMany.output())
                .contains("--parallel 33 splits a context of 64 tokens into slots of 1; each slot needs at least 2"
                        + " tokens (a prompt token and a generated one): give --parallel at most 32 or a larger"
                        + " --ctx-size");
    }
}
