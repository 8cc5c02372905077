package dev.ctxprobe.results;

/**
 * One value a prediction used, with where it came from.
 *
 * @param name what it is, e.g. {@code --gpu-memory-utilization} or {@code max_position_embeddings}
 * @param value as read or assumed, in words a user recognises ({@code 0.90}, {@code 141 GiB})
 * @param where the file, the key or the flag it came from, e.g. {@code backends[1].command}
 */
public record Input(String name, String value, Source source, String where) {}
