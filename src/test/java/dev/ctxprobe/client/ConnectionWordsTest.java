package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import org.junit.jupiter.api.Test;

/** Issue 30: a connection_failed detail carried a Java class name ("EOFException"); it now says what happened. */
class ConnectionWordsTest {
    @Test
    void aFailedConnectionIsSaidInWords() {
        assertThat(CompletionClient.describe(new EOFException("unexpected end of stream")))
                .isEqualTo("the connection ended early: unexpected end of stream");
        assertThat(CompletionClient.describe(new ConnectException("Connection refused")))
                .isEqualTo("the connection was refused: Connection refused");
        assertThat(CompletionClient.describe(new IOException("x", new SocketException("Connection reset"))))
                .isEqualTo("the connection failed: x (caused by the connection failed: Connection reset)")
                .doesNotContain("Exception");
    }
}
