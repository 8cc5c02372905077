package dev.ctxprobe.client;

/** What happened to one request, as raw fact; classifying it into a failure class is the caller's job. */
public enum RequestOutcome {
    /** HTTP 200, at least one choice-bearing event, no error event. */
    OK,
    /** The server answered with a status other than 200. */
    HTTP_STATUS,
    /** A 200 stream carried {@code {"error": ...}} (SGLang and TGI report failures this way). */
    ERROR_EVENT,
    /** The response ended cleanly without any event whose {@code choices} was non-empty. */
    NO_CHOICES,
    /** No answer within the request timeout: before the headers, or a stream that went silent. */
    TIMEOUT,
    /** Connection refused, reset, or closed before the response was complete. */
    CONNECTION_FAILED,
    /** Bytes that are not HTTP, not server-sent events, or not JSON where JSON belongs. */
    PROTOCOL_ERROR,
    /** More bytes than the client's read limits allow: a stream without end, a body of gigabytes. */
    TOO_LARGE
}
