package dev.ctxprobe.results;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What one step measured, the key of a result: the backend (with the values of its cell's parameters, empty while
 * a backend has no matrix), the prompt length, and how many requests were sent at once. A strategy proposes points;
 * scenarios carry theirs; resume, the recorder and the reports find steps by it.
 *
 * @param backend the backend's name as the experiment gives it
 * @param params a cell's parameter values by name, in the order the experiment names the parameters (equality
 *     ignores the order); empty for a backend without a matrix
 * @param target the prompt length in tokens
 * @param concurrency the number of requests sent at once, 1 for a single prompt
 */
public record Point(String backend, Map<String, String> params, long target, int concurrency) {

    public Point {
        Objects.requireNonNull(backend, "backend");
        params = params == null || params.isEmpty()
                ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(params));
    }

    /** What the points of one search share: the backend's cell and the concurrency; only the length varies. */
    public record Series(String backend, Map<String, String> params, int concurrency) {

        public Series {
            Objects.requireNonNull(backend, "backend");
            params = params == null || params.isEmpty()
                    ? Map.of()
                    : Collections.unmodifiableMap(new LinkedHashMap<>(params));
        }

        /** Single prompts to {@code backend}. */
        public static Series of(String backend) {
            return new Series(backend, Map.of(), 1);
        }

        /** The point of this series at {@code target} tokens. */
        public Point at(long target) {
            return new Point(backend, params, target, concurrency);
        }
    }

    /** The series this point belongs to. */
    public Series series() {
        return new Series(backend, params, concurrency);
    }

    /** A single prompt of {@code target} tokens to {@code backend}. */
    public static Point of(String backend, long target) {
        return new Point(backend, Map.of(), target, 1);
    }

    /** The same backend and concurrency at another length. */
    public Point at(long otherTarget) {
        return new Point(backend, params, otherTarget, concurrency);
    }
}
