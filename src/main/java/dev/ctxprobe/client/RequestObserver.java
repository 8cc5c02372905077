package dev.ctxprobe.client;

/**
 * Hears when each request of a step goes out and when its first token arrives, so that whoever shows progress can
 * tell prefill from decoding. Called on the request's own thread, outside the timed window for {@link #sending} and
 * after the first token's arrival was stamped for {@link #firstToken}: an observer must only record and return, or
 * it would delay the other streams' stamps.
 */
public interface RequestObserver {
    /** Hears nothing. */
    RequestObserver NONE = new RequestObserver() {};

    /** Request {@code index} (a warm-up when {@code warmup}) is about to be sent. */
    default void sending(int index, boolean warmup) {}

    /** Request {@code index} has its first token. */
    default void firstToken(int index, boolean warmup) {}
}
