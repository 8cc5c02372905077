package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.ModelDiscovery;
import dev.ctxprobe.client.RequestObserver;
import dev.ctxprobe.client.ServerQueries;
import java.time.Duration;
import java.util.function.Function;

/**
 * What a step asks a ready server: the answers to the questions about its limits, the model it serves, and the
 * measured load. Over HTTP in a run ({@link #HTTP}); the test sources answer from memory, so that whole searches
 * run in unit tests without a socket.
 */
public interface ServerClient {

    /** The body a GET of a path returns, or null when the server does not answer it within {@code timeout}. */
    Function<String, String> queries(String baseUrl, Duration timeout, String apiKey);

    /** The name the server serves its model under, asked for up to {@code within}; null when it names none. */
    String servedModel(String baseUrl, String apiKey, Duration within) throws InterruptedException;

    /** Sends the step's warm-up and measured requests and records each. */
    LoadResult send(LoadPlan plan, RequestObserver observer) throws InterruptedException;

    /** ctxprobe's own HTTP client. */
    ServerClient HTTP = new ServerClient() {
        @Override
        public Function<String, String> queries(String baseUrl, Duration timeout, String apiKey) {
            return new ServerQueries(baseUrl, timeout, apiKey)::get;
        }

        @Override
        public String servedModel(String baseUrl, String apiKey, Duration within) throws InterruptedException {
            return ModelDiscovery.awaitModelId(baseUrl, apiKey, within);
        }

        @Override
        public LoadResult send(LoadPlan plan, RequestObserver observer) throws InterruptedException {
            return new LoadRunner(plan, observer).run();
        }
    };
}
