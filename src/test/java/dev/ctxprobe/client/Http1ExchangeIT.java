package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The hand-written HTTP/1.1 layer against a real socket whose server writes exactly the bytes a test gives, in the
 * pieces it gives (each piece its own write after a pause, so they arrive in separate reads).
 */
class Http1ExchangeIT {

    private static final long TARGET = 20;
    private static final String EVENT_1 =
            "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}]}\n\n";
    private static final String EVENT_2 =
            "data: {\"choices\":[{\"index\":0,\"text\":\"b\",\"finish_reason\":\"length\"}],"
                    + "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2}}\n\n";
    private static final String DONE = "data: [DONE]\n\n";
    private static final String SSE_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n";

    @AutoClose
    private final ScriptedServer server = new ScriptedServer();

    private final AtomicReference<String> request = new AtomicReference<>();

    /** Answers one request with {@code pieces}, 30 ms apart, then closes, or keeps the connection when {@code hang}. */
    private void serve(List<String> pieces, boolean hang) {
        server.answer(s -> {
            request.set(readRequest(s.getInputStream()));
            OutputStream out = s.getOutputStream();
            for (String piece : pieces) {
                Thread.sleep(30);
                out.write(piece.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            }
            if (hang) {
                s.getInputStream().read();
            }
        });
    }

    /** The request's head and its Content-Length body, as text. */
    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            String text = head.toString(StandardCharsets.ISO_8859_1);
            if (text.endsWith("\r\n\r\n")) {
                String length = text.lines()
                        .filter(l -> l.toLowerCase().startsWith("content-length:"))
                        .findFirst()
                        .orElseThrow()
                        .substring("content-length:".length())
                        .strip();
                return text + new String(in.readNBytes(Integer.parseInt(length)), StandardCharsets.ISO_8859_1);
            }
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private RequestRecord send(Duration timeout, String apiKey) {
        byte[] body = TokenPrompts.body("m", TARGET, 2, TokenRange.DEFAULT, 0);
        try (CompletionClient client =
                new CompletionClient("http://127.0.0.1:" + server.port() + "/v1", timeout, apiKey)) {
            return client.send(new CompletionRequest(0, false, TARGET, body));
        }
    }

    private RequestRecord send() {
        return send(Duration.ofSeconds(10), null);
    }

    private static String chunk(String data) {
        return Integer.toHexString(data.length()) + "\r\n" + data + "\r\n";
    }

    private static void assertStreamed(RequestRecord r) {
        assertThat(r.outcome()).as(r.errorText()).isEqualTo(RequestOutcome.OK);
        assertThat(r.choiceEvents()).isEqualTo(2);
        assertThat(r.promptTokens()).isEqualTo((int) TARGET);
        assertThat(r.finishReason()).isEqualTo("length");
    }

    @Test
    void theRequestIsOnePostThatClosesItsConnection() {
        serve(List.of(SSE_HEAD + "Content-Length: 0\r\n\r\n"), false);

        RequestRecord r = send(Duration.ofSeconds(10), "sk-test");

        assertThat(r.outcome()).isEqualTo(RequestOutcome.NO_CHOICES);
        String sent = request.get();
        byte[] body = TokenPrompts.body("m", TARGET, 2, TokenRange.DEFAULT, 0);
        assertThat(sent)
                .startsWith("POST /v1/completions HTTP/1.1\r\n")
                .contains("\r\nHost: 127.0.0.1:" + server.port() + "\r\n")
                .contains("\r\nConnection: close\r\n")
                .contains("\r\nAuthorization: Bearer sk-test\r\n")
                .contains("\r\nContent-Length: " + body.length + "\r\n")
                .endsWith("\r\n\r\n" + new String(body, StandardCharsets.ISO_8859_1));
        assertThat(r.sendMs()).isNotNull().isNotNegative();
    }

    @Test
    void aBodyOfManyWritesArrivesWholeAndInOrder() {
        serve(List.of(SSE_HEAD + "Content-Length: 0\r\n\r\n"), false);
        long tokens = 100_000;
        byte[] body = TokenPrompts.body("m", tokens, 2, TokenRange.DEFAULT, 7);
        assertThat(body.length).isGreaterThan(3 * Http1Exchange.WRITE_BYTES);

        try (CompletionClient client =
                new CompletionClient("http://127.0.0.1:" + server.port() + "/v1", Duration.ofSeconds(10), null)) {
            client.send(new CompletionRequest(0, false, tokens, body));
        }

        assertThat(request.get())
                .contains("\r\nContent-Length: " + body.length + "\r\n")
                .endsWith("\r\n\r\n" + new String(body, StandardCharsets.ISO_8859_1));
    }

    @Test
    void chunkedBodyWithExtensionsAndTrailersIsDecoded() {
        String one = Integer.toHexString(EVENT_1.length()) + ";name=value;other\r\n" + EVENT_1 + "\r\n";
        serve(
                List.of(
                        SSE_HEAD + "Transfer-Encoding: chunked\r\n\r\n",
                        one,
                        chunk(EVENT_2) + chunk(DONE),
                        "0;last\r\nX-Trailer: yes\r\nOther: too\r\n\r\n"),
                false);

        RequestRecord r = send();

        assertStreamed(r);
        assertThat(r.sawDone()).isTrue();
    }

    @Test
    void chunkSizesAndEventsSplitAcrossReadsAreReassembled() {
        String two = chunk(EVENT_2);
        serve(
                List.of(
                        SSE_HEAD + "Transfer-Encoding: chunked\r\n\r\n",
                        chunk(EVENT_1).substring(0, 1),
                        chunk(EVENT_1).substring(1, 10),
                        chunk(EVENT_1).substring(10),
                        two.substring(0, two.length() - 1),
                        two.substring(two.length() - 1) + chunk(DONE) + "0\r\n\r\n"),
                false);

        RequestRecord r = send();

        assertStreamed(r);
        // Each event is stamped when the read that completed it returned: the second came 30 ms after the first.
        assertThat(r.itlMs().getFirst()).isGreaterThan(20.0);
    }

    @Test
    void headersSplitAcrossReadsAreReassembled() {
        String head = SSE_HEAD + "Transfer-Encoding: chunked\r\n\r\n";
        serve(
                List.of(
                        head.substring(0, 5),
                        head.substring(5, 17),
                        head.substring(17),
                        chunk(EVENT_1 + EVENT_2 + DONE)),
                false);

        assertStreamed(send());
    }

    @Test
    void bodyWithoutLengthOrChunkingEndsWithTheConnection() {
        serve(List.of(SSE_HEAD + "\r\n", EVENT_1, EVENT_2), false);

        RequestRecord r = send();

        assertStreamed(r);
        assertThat(r.sawDone()).isFalse();
    }

    @Test
    void contentLengthBodyIsReadToItsLength() {
        String body = EVENT_1 + EVENT_2 + DONE;
        serve(List.of(SSE_HEAD + "Content-Length: " + body.length() + "\r\n\r\n" + body), true);

        RequestRecord r = send();

        assertStreamed(r);
        assertThat(r.bytesReceived()).isEqualTo(body.length());
    }

    @Test
    void contentLengthBodyCutShortIsAConnectionFailure() {
        serve(List.of(SSE_HEAD + "Content-Length: 10000\r\n\r\n" + EVENT_1), false);

        RequestRecord r = send();

        assertThat(r.outcome()).isEqualTo(RequestOutcome.CONNECTION_FAILED);
        assertThat(r.choiceEvents()).isEqualTo(1);
    }

    @Test
    void chunkedBodyCutShortIsAConnectionFailure() {
        serve(List.of(SSE_HEAD + "Transfer-Encoding: chunked\r\n\r\n", chunk(EVENT_1), "200\r\ndata: {"), false);

        RequestRecord r = send();

        assertThat(r.outcome()).isEqualTo(RequestOutcome.CONNECTION_FAILED);
        assertThat(r.errorText()).contains("chunk");
    }

    @Test
    void anInterimContinueIsSkipped() {
        serve(List.of("HTTP/1.1 100 Continue\r\n\r\n", SSE_HEAD + "\r\n" + EVENT_1 + EVENT_2 + DONE), false);

        assertStreamed(send());
    }

    @Test
    void aBadStatusLineIsAProtocolError() {
        serve(List.of("HTTP/1.1 2OO OK\r\n\r\n"), false);

        RequestRecord r = send();

        assertThat(r.outcome()).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(r.errorText()).contains("HTTP/1.1 2OO OK");
    }

    @Test
    void aBadChunkSizeIsAProtocolError() {
        serve(List.of(SSE_HEAD + "Transfer-Encoding: chunked\r\n\r\n", "zz\r\n" + EVENT_1 + "\r\n"), false);

        RequestRecord r = send();

        assertThat(r.outcome()).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(r.errorText()).contains("chunk size").contains("zz");
    }

    @Test
    void aStatusThatIsNot200KeepsTheHeadOfItsBody() {
        String body = "{\"error\":\"model not found\"}";
        serve(
                List.of("HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: " + body.length()
                        + "\r\n\r\n" + body),
                true);

        RequestRecord r = send();

        assertThat(r.outcome()).isEqualTo(RequestOutcome.HTTP_STATUS);
        assertThat(r.httpStatus()).isEqualTo(404);
        assertThat(r.errorText()).isEqualTo(body);
    }

    @Test
    void headersThatTrickleInPastTheRequestTimeoutEndAtIt() {
        // A byte every 30 ms never trips the read timeout: only the whole-request deadline ends this.
        List<String> trickle = new java.util.ArrayList<>();
        for (char c : "HTTP/1.1 200 OK\r\nX-Slow: ".toCharArray()) {
            trickle.add(String.valueOf(c));
        }
        for (int i = 0; i < 100; i++) {
            trickle.add("a");
        }
        serve(trickle, true);

        long start = System.nanoTime();
        RequestRecord r = send(Duration.ofMillis(600), null);
        double ms = (System.nanoTime() - start) / 1e6;

        assertThat(r.outcome()).isEqualTo(RequestOutcome.TIMEOUT);
        assertThat(r.errorText()).contains("timeout");
        assertThat(ms).isBetween(550.0, 2500.0);
    }

    @Test
    void cancelAllEndsARequestInFlightAtOnce() throws Exception {
        serve(List.of(SSE_HEAD + "\r\n", EVENT_1), true);
        byte[] body = TokenPrompts.body("m", TARGET, 2, TokenRange.DEFAULT, 0);
        try (CompletionClient client =
                new CompletionClient("http://127.0.0.1:" + server.port(), Duration.ofSeconds(30))) {
            AtomicReference<RequestRecord> record = new AtomicReference<>();
            Thread sending = Thread.ofVirtual()
                    .start(() -> record.set(client.send(new CompletionRequest(0, false, TARGET, body))));
            Thread.sleep(500);
            long cancelled = System.nanoTime();
            client.cancelAll();
            sending.join(5000);

            assertThat(record.get()).isNotNull();
            assertThat(record.get().outcome()).isEqualTo(RequestOutcome.CONNECTION_FAILED);
            assertThat(record.get().choiceEvents()).isEqualTo(1);
            assertThat((record.get().tEndNanos() - cancelled) / 1e6).isLessThan(1000.0);
        }
    }
}
