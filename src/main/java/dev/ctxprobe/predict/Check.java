package dev.ctxprobe.predict;

import dev.ctxprobe.results.Bound;

/**
 * One rule an engine applies to a target, and whether the target passes it.
 *
 * @param line the comparison as a user can check it, e.g. {@code max_model_len 1,049,600 > 1,048,576
 *     (max_position_embeddings)}
 */
record Check(Bound bound, boolean passes, String line) {}
