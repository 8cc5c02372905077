package dev.ctxprobe.hardware;

/**
 * One accelerator as its query tool reports it.
 *
 * @param memTotalMiB null when the tool does not report it (e.g. {@code [N/A]})
 * @param memUsedMiB null when the tool does not report it
 */
public record Device(int index, String name, Long memTotalMiB, Long memUsedMiB) {}
