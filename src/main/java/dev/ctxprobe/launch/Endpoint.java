package dev.ctxprobe.launch;

/** Where a server answers: the host to connect to (never a wildcard) and its port. */
public record Endpoint(String host, int port) {

    /** The URL root, e.g. {@code http://127.0.0.1:8000}; an IPv6 literal goes in brackets. */
    public String baseUrl() {
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    @Override
    public String toString() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
