package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.ctxprobe.client.FakeCompletionServer.Mode;
import dev.ctxprobe.client.FakeCompletionServer.Script;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CompletionClientIT {

    private static final long TARGET = 50;

    private FakeCompletionServer server;

    @BeforeEach
    void start() throws IOException {
        server = new FakeCompletionServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private RequestRecord send(String baseUrl, Duration timeout) {
        byte[] body = TokenPrompts.body("m", TARGET, 8, TokenRange.DEFAULT, 0);
        try (CompletionClient client = new CompletionClient(baseUrl, timeout)) {
            return client.send(new CompletionRequest(0, false, TARGET, body));
        }
    }

    private RequestRecord send(Script script) {
        server.script(script);
        return send(server.baseUrl(), Duration.ofSeconds(10));
    }

    @Test
    void anObserverHearsTheSendAndTheFirstTokenOnceEachInOrder() {
        server.script(Script.stream(200, 5, 20));
        java.util.List<String> heard = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        long[] firstTokenAt = new long[1];
        byte[] body = TokenPrompts.body("m", TARGET, 8, TokenRange.DEFAULT, 0);
        RequestRecord r;
        try (CompletionClient client = new CompletionClient(server.baseUrl(), Duration.ofSeconds(10))) {
            r = client.send(new CompletionRequest(3, true, TARGET, body), new RequestObserver() {
                @Override
                public void sending(int index, boolean warmup) {
                    heard.add("sending " + index + " " + warmup);
                }

                @Override
                public void firstToken(int index, boolean warmup) {
                    firstTokenAt[0] = System.nanoTime();
                    heard.add("first token " + index + " " + warmup);
                }
            });
        }
        assertThat(r.ok()).isTrue();
        assertThat(heard).containsExactly("sending 3 true", "first token 3 true");
        // Told after the first token's arrival was stamped, and before the next token's.
        assertThat(firstTokenAt[0]).isGreaterThanOrEqualTo(r.tFirstNanos()).isLessThan(r.tLastNanos());
    }

    @Test
    void streamRecordsUsageAndEveryEventTime() {
        RequestRecord r = send(Script.stream(200, 5, 20));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.OK);
        assertThat(r.ok()).isTrue();
        assertThat(r.httpStatus()).isEqualTo(200);
        assertThat(r.promptTokens()).isEqualTo((int) TARGET);
        assertThat(r.exactLength()).isTrue();
        assertThat(r.completionTokens()).isEqualTo(5);
        assertThat(r.choiceEvents()).isEqualTo(5);
        assertThat(r.itlMs()).hasSize(4);
        double gaps = r.itlMs().stream().mapToDouble(Double::doubleValue).sum();
        assertThat(gaps).isCloseTo(r.e2eMs() - r.ttftMs(), within(1e-6));
        assertThat(r.ttftMs()).isGreaterThanOrEqualTo(200.0);
        assertThat(r.e2eMs()).isGreaterThan(r.ttftMs());
        assertThat(r.tpotMs()).isEqualTo((r.e2eMs() - r.ttftMs()) / 4);
        assertThat(r.sendMs()).isNotNull().isLessThanOrEqualTo(r.ttftMs());
        assertThat(r.tSendNanos()).isGreaterThanOrEqualTo(r.tStartNanos());
        assertThat(r.tEndNanos()).isGreaterThanOrEqualTo(r.tLastNanos());
        assertThat(r.finishReason()).isEqualTo("length");
        assertThat(r.sawDone()).isTrue();
        assertThat(r.bytesReceived()).isGreaterThan(5 * 100L);
        assertThat(r.errorText()).isNull();
        assertThat(server.received()).singleElement().satisfies(req -> {
            assertThat(req.promptLen()).isEqualTo((int) TARGET);
            assertThat(req.stream()).isTrue();
            assertThat(req.maxTokens()).isEqualTo(8);
        });
    }

    @Test
    void singleOutputTokenHasNoTpotAndNoGaps() {
        RequestRecord r = send(Script.stream(0, 1, 0));

        assertThat(r.ok()).isTrue();
        assertThat(r.tpotMs()).isNull();
        assertThat(r.itlMs()).isEmpty();
        assertThat(r.e2eMs()).isEqualTo(r.ttftMs());
    }

    @Test
    void errorEventInsideA200StreamIsReportedWithItsText() {
        RequestRecord r = send(Script.mode(Mode.ERROR_EVENT));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.ERROR_EVENT);
        assertThat(r.ok()).isFalse();
        assertThat(r.httpStatus()).isEqualTo(200);
        assertThat(r.errorText()).contains("longer than the model's context length");
    }

    @Test
    void non200KeepsTheHeadOfTheBody() {
        String message = "{\"object\":\"error\",\"message\":\"This model's maximum context length is 32 tokens\"}";
        RequestRecord r = send(Script.status(400, message + " ".repeat(10_000) + "TAIL"));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.HTTP_STATUS);
        assertThat(r.httpStatus()).isEqualTo(400);
        assertThat(r.errorText()).startsWith(message).hasSize(CompletionClient.ERROR_HEAD_BYTES);
        assertThat(r.ttftMs()).isNull();
    }

    @Test
    void serverThatHangsAfterHeadersTimesOutWithinTheRequestTimeout() {
        server.script(Script.mode(Mode.HANG_AFTER_HEADERS));
        long start = System.nanoTime();
        RequestRecord r = send(server.baseUrl(), Duration.ofSeconds(1));
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(r.outcome()).isEqualTo(RequestOutcome.TIMEOUT);
        assertThat(r.httpStatus()).isEqualTo(200);
        // The server hangs for 60 s; ending long before proves the timeout bounds the call.
        assertThat(took).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void serverThatNeverAnswersTimesOut() {
        server.script(new Script(200, 60_000, 1, 0, Mode.STREAM, ""));
        RequestRecord r = send(server.baseUrl(), Duration.ofSeconds(1));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.TIMEOUT);
        assertThat(r.httpStatus()).isZero();
        assertThat(r.tSendNanos()).isNotNull();
    }

    @Test
    void linesThatAreNotEventsAreAProtocolError() {
        RequestRecord r = send(Script.mode(Mode.GARBAGE_LINES));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(r.errorText()).contains("<html>");
    }

    @Test
    void eventThatIsNotJsonIsAProtocolError() {
        RequestRecord r = send(Script.mode(Mode.INVALID_JSON));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(r.errorText()).contains("not valid JSON");
    }

    @Test
    void connectionDroppedMidStreamIsAConnectionFailure() {
        RequestRecord r = send(Script.mode(Mode.CLOSE_MID_STREAM));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.CONNECTION_FAILED);
        assertThat(r.choiceEvents()).isEqualTo(1);
        assertThat(r.ttftMs()).isNotNull();
        assertThat(r.sawDone()).isFalse();
    }

    @Test
    void streamWithoutChoicesIsReportedAsSuch() {
        RequestRecord r = send(Script.mode(Mode.NO_CHOICES));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.NO_CHOICES);
        assertThat(r.promptTokens()).isEqualTo((int) TARGET);
        assertThat(r.ttftMs()).isNull();
    }

    @Test
    void streamWithoutUsageLeavesTheCountsUnknown() {
        RequestRecord r = send(new Script(200, 0, 3, 0, Mode.NO_USAGE, ""));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.OK);
        assertThat(r.promptTokens()).isNull();
        assertThat(r.completionTokens()).isNull();
        assertThat(r.exactLength()).isFalse();
        assertThat(r.tpotMs()).isNull();
        assertThat(r.itlMs()).hasSize(2);
    }

    @Test
    void nonStreamingJsonAnswerStillCounts() {
        RequestRecord r = send(Script.mode(Mode.JSON_BODY));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.OK);
        assertThat(r.promptTokens()).isEqualTo((int) TARGET);
        assertThat(r.completionTokens()).isEqualTo(3);
        assertThat(r.finishReason()).isEqualTo("length");
    }

    @Test
    void refusedConnectionIsAConnectionFailure() throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        RequestRecord r = send("http://127.0.0.1:" + port, Duration.ofSeconds(2));

        assertThat(r.outcome()).isEqualTo(RequestOutcome.CONNECTION_FAILED);
        assertThat(r.httpStatus()).isZero();
        assertThat(r.tSendNanos()).isNull();
        assertThat(r.errorText()).isNotBlank();
    }

    @Test
    void bytesThatAreNotHttpAreAProtocolError() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread answering = Thread.ofVirtual().start(() -> {
                try (Socket s = socket.accept();
                        InputStream in = s.getInputStream();
                        OutputStream out = s.getOutputStream()) {
                    in.readNBytes(16);
                    out.write("SSH-2.0-OpenSSH_9.6\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    in.readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            RequestRecord r = send("http://127.0.0.1:" + socket.getLocalPort(), Duration.ofSeconds(5));
            answering.join(5000);

            assertThat(r.outcome()).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
            assertThat(r.errorText()).contains("SSH-2.0");
        }
    }

    @Test
    void modelDiscoveryReadsTheFirstModelId() throws IOException {
        assertThat(ModelDiscovery.firstModelId(server.baseUrl() + "/")).isEqualTo("served-model");
    }

    @Test
    void modelDiscoveryFailsWithTheServersAnswer() {
        server.modelsBody("no models here");

        assertThatThrownBy(() -> ModelDiscovery.firstModelId(server.baseUrl(), Duration.ofSeconds(2)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("404")
                .hasMessageContaining("no models here");
    }

    @Test
    void modelDiscoveryFailsOnAnEmptyList() {
        server.modelsBody("{\"data\":[]}");

        assertThatThrownBy(() -> ModelDiscovery.firstModelId(server.baseUrl(), Duration.ofSeconds(2)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("lists no model");
    }
}
