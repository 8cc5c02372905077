package dev.ctxprobe.results;

/**
 * An input the prediction needed and did not have; the check it feeds was left out, never guessed.
 *
 * @param name what is missing, e.g. {@code accelerator memory}
 * @param how what to give so that it is known, in one sentence
 */
public record Missing(String name, String how) {}
