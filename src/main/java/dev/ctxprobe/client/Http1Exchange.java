package dev.ctxprobe.client;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import okio.Buffer;
import okio.BufferedSource;
import okio.Okio;
import okio.Source;
import okio.Timeout;

/**
 * One HTTP/1.1 request on its own socket, read by hand: ctxprobe's one HTTP transport, a POST for completions and a
 * plain GET for readiness and for what a server states about itself ({@link PlainGet}). The request is written
 * blocking by the stream's thread; the response is read off the socket by the {@link ReadLoop}, which stamps when its
 * bytes came ({@link #arrivalNanos}), and parsed by the stream's thread. Written for the TTFT clock (issue 17): with
 * many streams OkHttp's per-call machinery put the client's timing error at several times the floor of a bare socket
 * per stream (BENCHMARKS.md, "Timing"), so this does no more than the request needs.
 * One request per connection ({@code Connection: close}), no redirects, no retries, no compression, no pooling.
 */
final class Http1Exchange implements AutoCloseable {

    /** The most the status line and headers together may hold: OkHttp's bound too. */
    static final int HEAD_BYTES = 256 * 1024;

    /** The most one chunk-size line may hold, extensions included. */
    static final int CHUNK_LINE_BYTES = 8 * 1024;

    /** The most one write of a request hands the socket. */
    static final int WRITE_BYTES = 128 * 1024;

    /**
     * Where a request goes: host as a socket needs it, port, the Host header's value and the path. Plain HTTP only: every
     * endpoint ctxprobe measures is one it launched or was given as host and port (launch.Endpoint), never a TLS URL.
     */
    record Target(String host, int port, String hostHeader, String path) {
        static Target of(String url) {
            URI uri = URI.create(url);
            if (uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("http")) {
                throw new IllegalArgumentException("not an http:// URL: " + url);
            }
            String host = uri.getHost();
            if (host == null) {
                throw new IllegalArgumentException("no host in the URL " + url);
            }
            int port = uri.getPort() == -1 ? 80 : uri.getPort();
            // URI keeps an IPv6 literal's brackets: the Host header wants them, a socket address does not.
            String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
            String hostHeader = port == 80 ? host : host + ":" + port;
            String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            if (uri.getRawQuery() != null) {
                path += "?" + uri.getRawQuery();
            }
            return new Target(bare, port, hostHeader, path);
        }
    }

    /** The response head: status and the headers that frame and type the body. */
    record Head(int status, String contentType, long contentLength, boolean chunked) {}

    private final SocketChannel channel;
    /** The response's bytes as the loop reads them; null until the request is written. */
    private volatile Inbox inbox;

    private BufferedSource in;
    /** When the request's first byte went out, and when its body was fully written; 0 until then. */
    long sendStartNanos;

    long bodyEndNanos;

    private Http1Exchange(SocketChannel channel) {
        this.channel = channel;
    }

    /**
     * Connects to {@code target}; {@code timeoutMillis} bounds the connect. Reads have no timeout of their own: the
     * caller's whole-request deadline, which starts earlier and is as long, closes the socket first.
     */
    static Http1Exchange open(Target target, int timeoutMillis) throws IOException {
        Http1Exchange exchange = unconnected();
        exchange.connect(target, timeoutMillis);
        return exchange;
    }

    /** An exchange whose socket is not connected yet: {@link #close()} from another thread also ends a connect. */
    static Http1Exchange unconnected() throws IOException {
        return new Http1Exchange(SocketChannel.open());
    }

    /** Connects to {@code target}, bounded by {@code timeoutMillis}; the socket is closed when it fails. */
    void connect(Target target, int timeoutMillis) throws IOException {
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.socket().connect(new InetSocketAddress(target.host(), target.port()), timeoutMillis);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Writes the POST: the head and a small body in one write, so the request leaves in one segment; a large body
     * follows the head in a second write.
     */
    void post(Target target, String extraHeaders, String contentType, String accept, byte[] body) throws IOException {
        byte[] headBytes = requestHead(
                "POST",
                target,
                accept,
                "Content-Type: " + contentType + "\r\nContent-Length: " + body.length + "\r\n",
                extraHeaders);
        if (headBytes.length + body.length <= 64 * 1024) {
            byte[] all = new byte[headBytes.length + body.length];
            System.arraycopy(headBytes, 0, all, 0, headBytes.length);
            System.arraycopy(body, 0, all, headBytes.length, body.length);
            sendStartNanos = System.nanoTime();
            writeFully(ByteBuffer.wrap(all));
        } else {
            sendStartNanos = System.nanoTime();
            writeFully(ByteBuffer.wrap(headBytes));
            writeFully(ByteBuffer.wrap(body));
        }
        bodyEndNanos = System.nanoTime();
        watchResponse();
    }

    /** Writes a GET of {@code target} with no body, in one write. */
    void get(Target target, String extraHeaders) throws IOException {
        writeFully(ByteBuffer.wrap(requestHead("GET", target, "*/*", "", extraHeaders)));
        watchResponse();
    }

    // Watched from the request's last byte on: whatever the server answers from then is stamped as it comes.
    private void watchResponse() throws IOException {
        channel.configureBlocking(false);
        inbox = ReadLoop.shared().watch(channel);
        if (!channel.isOpen()) {
            // Closed by the deadline between the write and the watch, so close() may not have seen the inbox.
            inbox.close();
        }
    }

    // NIO writes a heap buffer through a temporary direct buffer of all that remains, and keeps that buffer for the
    // thread: a long prompt's body written whole cost its size again, twice over, in peak memory (BENCHMARKS.md,
    // "Memory, second pass"). Slices of WRITE_BYTES, as a socket's OutputStream writes, keep that copy at WRITE_BYTES.
    private void writeFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ByteBuffer slice = b.slice(b.position(), Math.min(b.remaining(), WRITE_BYTES));
            b.position(b.position() + channel.write(slice));
        }
    }

    /** When the bytes of the latest read of the response came off the socket (System.nanoTime). */
    long arrivalNanos() {
        return inbox.arrivalNanos();
    }

    /**
     * The request line and headers: {@code contentHeaders} frame a body (empty without one), {@code extraHeaders} are
     * the caller's (an API key); each header ends with CRLF.
     */
    static byte[] requestHead(String method, Target target, String accept, String contentHeaders, String extraHeaders) {
        String head = method + " " + target.path() + " HTTP/1.1\r\nHost: " + target.hostHeader()
                + "\r\nUser-Agent: ctxprobe\r\nAccept: " + accept + "\r\n" + contentHeaders
                + "Connection: close\r\n" + extraHeaders + "\r\n";
        return head.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Reads the status line and headers, skipping any 1xx interim response. */
    Head readHead() throws IOException {
        in = Okio.buffer(Okio.source(inbox));
        return readHead(in);
    }

    /** The response head at the start of {@code in}, which is left at the body's first byte. */
    static Head readHead(BufferedSource in) throws IOException {
        long budget = HEAD_BYTES;
        while (true) {
            String statusLine = line(in, budget, "the status line");
            budget -= statusLine.length() + 2;
            int status = status(statusLine);
            String contentType = null;
            long contentLength = -1;
            boolean chunked = false;
            String header;
            while (!(header = line(in, budget, "the response headers")).isEmpty()) {
                budget -= header.length() + 2;
                int colon = header.indexOf(':');
                if (colon <= 0) {
                    throw new ProtocolException("malformed response header: " + shorten(header));
                }
                String name = header.substring(0, colon).strip();
                String value = header.substring(colon + 1).strip();
                if (name.equalsIgnoreCase("Content-Type")) {
                    contentType = value;
                } else if (name.equalsIgnoreCase("Content-Length")) {
                    contentLength = contentLength(value);
                } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
                    chunked = value.toLowerCase(Locale.ROOT).endsWith("chunked");
                }
            }
            if (status >= 100 && status < 200 && status != 101) {
                continue;
            }
            return new Head(status, contentType, contentLength, chunked);
        }
    }

    /** The body as its framing gives it: chunked, a fixed length, or up to the connection's close. */
    Source body(Head head) {
        return body(in, head);
    }

    /** The body that follows {@code head} in {@code in}. */
    static Source body(BufferedSource in, Head head) {
        if (head.status() == 204 || head.status() == 304) {
            return new Buffer();
        }
        if (head.chunked()) {
            return new ChunkedSource(in);
        }
        if (head.contentLength() >= 0) {
            return new FixedLengthSource(in, head.contentLength());
        }
        return in;
    }

    /** Closes the socket; a thread blocked reading or writing it fails at once. Safe from any thread, repeatedly. */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // Closing is all that was asked; a socket that fails to close is closed as far as this request goes.
        }
        // An inbox made after this read finds the channel closed and closes itself (watchResponse).
        Inbox watched = inbox;
        if (watched != null) {
            watched.close();
        }
    }

    private static int status(String line) throws ProtocolException {
        // "HTTP/1.1 200 OK": the reason phrase may be empty, even missing with its space.
        if (line.length() < 12
                || !line.startsWith("HTTP/1.")
                || line.charAt(8) != ' '
                || (line.length() > 12 && line.charAt(12) != ' ')) {
            throw new ProtocolException("unexpected status line: " + shorten(line));
        }
        int status = 0;
        for (int i = 9; i < 12; i++) {
            char c = line.charAt(i);
            if (c < '0' || c > '9') {
                throw new ProtocolException("unexpected status line: " + shorten(line));
            }
            status = status * 10 + (c - '0');
        }
        return status;
    }

    private static long contentLength(String value) throws ProtocolException {
        try {
            long length = Long.parseLong(value);
            if (length >= 0) {
                return length;
            }
        } catch (NumberFormatException e) {
            // reported below, with the value
        }
        throw new ProtocolException("invalid Content-Length: " + shorten(value));
    }

    /**
     * The next line without its CRLF (or bare LF), as ISO-8859-1; {@code what} names it in errors. A line longer than
     * {@code limit} is a protocol error, the stream's end before a line's end a truncation.
     */
    static String line(BufferedSource source, long limit, String what) throws IOException {
        long newline = source.indexOf((byte) '\n', 0, Math.max(1, limit));
        if (newline == -1) {
            if (source.getBuffer().size() >= limit) {
                throw new ProtocolException(what + " ran past " + ReadLimits.size(limit) + " without a line end");
            }
            throw new EOFException("unexpected end of stream in " + what);
        }
        String line = source.readString(newline, StandardCharsets.ISO_8859_1);
        source.skip(1);
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }

    private static String shorten(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    /** A body read out of the connection's buffered stream, whose timeout and close are the connection's. */
    abstract static class FramedSource implements Source {
        final BufferedSource in;

        FramedSource(BufferedSource in) {
            this.in = in;
        }

        @Override
        public Timeout timeout() {
            return in.timeout();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** A body of a known length: ends there, and a connection closed before it is a truncated body. */
    static final class FixedLengthSource extends FramedSource {
        private long remaining;

        FixedLengthSource(BufferedSource in, long length) {
            super(in);
            this.remaining = length;
        }

        @Override
        public long read(Buffer sink, long byteCount) throws IOException {
            if (remaining == 0) {
                return -1;
            }
            long read = in.read(sink, Math.min(byteCount, remaining));
            if (read == -1) {
                throw new EOFException("unexpected end of stream: " + remaining + " bytes of the body never came");
            }
            remaining -= read;
            return read;
        }
    }

    /**
     * A chunked body (RFC 9112 section 7.1), decoded: chunk extensions ignored, trailers read and dropped. Each read
     * returns what one read of the socket brought, never waiting to fill a chunk, so events keep their arrival.
     */
    static final class ChunkedSource extends FramedSource {
        /** Bytes left in the current chunk; -1 before the first chunk. */
        private long remaining = -1;

        private boolean done;

        ChunkedSource(BufferedSource in) {
            super(in);
        }

        @Override
        public long read(Buffer sink, long byteCount) throws IOException {
            if (done) {
                return -1;
            }
            if (remaining <= 0) {
                nextChunk();
                if (done) {
                    return -1;
                }
            }
            long read = in.read(sink, Math.min(byteCount, remaining));
            if (read == -1) {
                throw new EOFException("unexpected end of stream: a chunk was cut short");
            }
            remaining -= read;
            return read;
        }

        private void nextChunk() throws IOException {
            if (remaining == 0) {
                String end = line(in, CHUNK_LINE_BYTES, "a chunk's end");
                if (!end.isEmpty()) {
                    throw new ProtocolException("a chunk is longer than its size said: " + shorten(end));
                }
            }
            String sizeLine = line(in, CHUNK_LINE_BYTES, "a chunk size");
            int extension = sizeLine.indexOf(';');
            String hex = (extension >= 0 ? sizeLine.substring(0, extension) : sizeLine).strip();
            long size;
            try {
                size = hex.isEmpty() || hex.startsWith("-") || hex.startsWith("+") ? -1 : Long.parseLong(hex, 16);
            } catch (NumberFormatException e) {
                size = -1;
            }
            if (size < 0) {
                throw new ProtocolException("invalid chunk size line: " + shorten(sizeLine));
            }
            if (size == 0) {
                long budget = HEAD_BYTES;
                String trailer;
                while (!(trailer = line(in, budget, "the trailers")).isEmpty()) {
                    budget -= trailer.length() + 2;
                }
                done = true;
            }
            remaining = size;
        }
    }
}
