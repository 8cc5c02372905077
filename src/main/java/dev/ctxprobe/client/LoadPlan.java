package dev.ctxprobe.client;

import java.time.Duration;
import java.util.Objects;

/**
 * The requests of one step: how many, how long, how fast, how many at once.
 *
 * @param baseUrl the server root, e.g. {@code http://127.0.0.1:8000}
 * @param model the model name the server expects
 * @param targetLen the exact prompt length in tokens
 * @param outputLen {@code max_tokens} of every request
 * @param numPrompts measured requests
 * @param maxConcurrency measured requests in flight at most
 * @param requestRate mean arrivals per second (Poisson); {@link Double#POSITIVE_INFINITY} sends all at once
 * @param warmup unmeasured requests sent one after another before the measured ones
 * @param range where token ids come from
 * @param requestTimeout bound on each whole request
 * @param apiKey sent as a bearer token when not null; never printed
 * @param limits how much of each response is read before it counts as too large
 * @param passkey the measured requests' pass-key prompts (docs/search.md#the-frontier-of-right-answers); null for
 *     prompts of random ids
 */
public record LoadPlan(
        String baseUrl,
        String model,
        long targetLen,
        int outputLen,
        int numPrompts,
        int maxConcurrency,
        double requestRate,
        int warmup,
        TokenRange range,
        Duration requestTimeout,
        String apiKey,
        ReadLimits limits,
        PasskeyPrompt passkey) {

    /** A plan whose prompts are random ids. */
    public LoadPlan(
            String baseUrl,
            String model,
            long targetLen,
            int outputLen,
            int numPrompts,
            int maxConcurrency,
            double requestRate,
            int warmup,
            TokenRange range,
            Duration requestTimeout,
            String apiKey,
            ReadLimits limits) {
        this(
                baseUrl,
                model,
                targetLen,
                outputLen,
                numPrompts,
                maxConcurrency,
                requestRate,
                warmup,
                range,
                requestTimeout,
                apiKey,
                limits,
                null);
    }

    // A record prints every field; the key must never reach a log, an exception or a report.
    @Override
    public String toString() {
        return "LoadPlan[baseUrl=" + baseUrl + ", model=" + model + ", targetLen=" + targetLen + ", outputLen="
                + outputLen + ", numPrompts=" + numPrompts + ", maxConcurrency=" + maxConcurrency + ", requestRate="
                + requestRate + ", warmup=" + warmup + ", range=" + range + ", requestTimeout=" + requestTimeout
                + ", apiKey=" + (apiKey == null ? "none" : "***") + ", limits=" + limits + ", passkey="
                + (passkey != null) + "]";
    }

    public LoadPlan {
        // In the order of the components, so that a new one gets its check beside its neighbours'.
        Objects.requireNonNull(baseUrl, "baseUrl");
        Objects.requireNonNull(model, "model");
        require(targetLen >= 1, "targetLen must be at least 1, got " + targetLen);
        require(outputLen >= 1, "outputLen must be at least 1, got " + outputLen);
        require(numPrompts >= 1, "numPrompts must be at least 1, got " + numPrompts);
        require(maxConcurrency >= 1, "maxConcurrency must be at least 1, got " + maxConcurrency);
        require(requestRate > 0, "requestRate must be positive (or infinite), got " + requestRate);
        require(warmup >= 0, "warmup must not be negative, got " + warmup);
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        require(requestTimeout.isPositive(), "requestTimeout must be positive, got " + requestTimeout);
        Objects.requireNonNull(limits, "limits");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}
