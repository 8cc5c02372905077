package dev.ctxprobe.predict;

/**
 * A sweep target one backend cannot serve whatever the memory, because its context is above the model's own
 * limit: such a step can only fail ({@code config_rejected}).
 *
 * @param path where the target is written, e.g. {@code sweep.targets[8]}
 * @param message one sentence: the target, the length it needs, the model's limit and its source
 */
public record TargetWarning(String backend, String path, long target, String message) {}
