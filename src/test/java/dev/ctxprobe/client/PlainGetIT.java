package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The GETs that ask a server about itself ({@link ServerQueries}, {@link ModelDiscovery}) and the readiness status
 * ({@link PlainGet#status}) over {@link PlainGet}, against a real socket whose server writes the bytes a test gives, or nothing at all.
 */
class PlainGetIT {

    @AutoClose
    private final ScriptedServer server = new ScriptedServer();

    private final AtomicReference<String> request = new AtomicReference<>();

    private String base() {
        return "http://127.0.0.1:" + server.port();
    }

    /** Answers one request with {@code response} and closes; with null, reads the request and says nothing. */
    private void serve(byte[] response) {
        server.answer(s -> {
            request.set(readHead(s.getInputStream()));
            if (response == null) {
                s.getInputStream().read();
                return;
            }
            OutputStream out = s.getOutputStream();
            out.write(response);
            out.flush();
        });
    }

    private void serve(String response) {
        serve(response.getBytes(StandardCharsets.UTF_8));
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            if (head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                break;
            }
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void aQueryIsOneGetWithTheKeyAndReadsAChunkedBody() {
        serve("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"n\":\r\n3\r\n42}\r\n0\r\n\r\n");

        String body = new ServerQueries(base() + "/", Duration.ofSeconds(5), "sk-test").get("/props");

        assertThat(body).isEqualTo("{\"n\":42}");
        assertThat(request.get())
                .startsWith("GET /props HTTP/1.1\r\n")
                .contains("\r\nHost: 127.0.0.1:" + server.port() + "\r\n")
                .contains("\r\nAuthorization: Bearer sk-test\r\n")
                .contains("\r\nConnection: close\r\n")
                .endsWith("\r\n\r\n");
    }

    @Test
    void aQueryAnsweredOtherThan200StatesNothing() {
        serve("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found");

        assertThat(new ServerQueries(base(), Duration.ofSeconds(5), null).get("/props"))
                .isNull();
    }

    @Test
    void aQueryWhoseBodyPassesTheLimitStatesNothing() {
        int length = (int) ServerQueries.MAX_BYTES + 1;
        byte[] head = ("HTTP/1.1 200 OK\r\nContent-Length: " + length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] response = new byte[head.length + length];
        System.arraycopy(head, 0, response, 0, head.length);
        serve(response);

        assertThat(new ServerQueries(base(), Duration.ofSeconds(5), null).get("/metrics"))
                .isNull();
    }

    @Test
    void aServerThatSaysNothingStatesNothingOnceTheTimeoutIsUp() {
        serve((byte[]) null);

        assertThat(new ServerQueries(base(), Duration.ofMillis(200), null).get("/props"))
                .isNull();
    }

    @Test
    void anInterruptEndsAQueryAndStaysSet() throws Exception {
        serve((byte[]) null);
        AtomicReference<String> answer = new AtomicReference<>("unset");
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread asking = Thread.ofPlatform().start(() -> {
            answer.set(new ServerQueries(base(), Duration.ofMinutes(5), null).get("/props"));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        while (request.get() == null) {
            Thread.sleep(5);
        }
        asking.interrupt();
        asking.join(10_000);

        assertThat(asking.isAlive()).isFalse();
        assertThat(answer.get()).isNull();
        assertThat(stillInterrupted).isTrue();
    }

    @Test
    void modelDiscoverySaysWhenTheServerDidNotAnswerInTime() {
        serve((byte[]) null);

        assertThatThrownBy(() -> ModelDiscovery.firstModelId(base(), Duration.ofMillis(200)))
                .isInstanceOf(InterruptedIOException.class)
                .hasMessageContaining("/v1/models did not answer within 200 ms");
    }

    @Test
    void modelDiscoveryRefusesABodyPastItsLimit() {
        int length = ModelDiscovery.MAX_BODY_BYTES + 1;
        serve("HTTP/1.1 200 OK\r\nContent-Length: " + length + "\r\n\r\n" + "x".repeat(length));

        assertThatThrownBy(() -> ModelDiscovery.firstModelId(base(), Duration.ofSeconds(5)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("which is no model list");
    }

    @Test
    void anHttpsUrlIsRefusedWithItsReason() {
        assertThat(new ServerQueries("https://127.0.0.1:1", Duration.ofSeconds(1), null).get("/props"))
                .isNull();
        assertThatThrownBy(() -> ModelDiscovery.firstModelId("https://127.0.0.1:1", Duration.ofSeconds(1)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not an http:// URL");
    }

    @Test
    void aStatusIsTheHeadAloneWhateverTheBodyDoes() throws Exception {
        // The head, then a body promised and never sent, the connection held open until the client leaves.
        server.answer(s -> {
            request.set(readHead(s.getInputStream()));
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n{\"err"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            s.getInputStream().read();
        });

        assertThat(PlainGet.status(base() + "/health", Duration.ofSeconds(30), "t"))
                .isEqualTo(503);
        assertThat(request.get()).startsWith("GET /health HTTP/1.1\r\n");
    }

    @Test
    void aStatusThatDoesNotComeInTimeIsATimeout() {
        serve((byte[]) null);

        assertThatThrownBy(() -> PlainGet.status(base() + "/health", Duration.ofMillis(200), "t"))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("/health did not answer within 200 ms");
    }
}
