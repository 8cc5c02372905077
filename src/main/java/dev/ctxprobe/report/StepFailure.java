package dev.ctxprobe.report;

import java.util.List;

/** ctxprobe's {@code failure} object of a step: where and why it failed, with the lines that prove it. */
public record StepFailure(
        String phase, String failureClass, String detail, List<String> evidence, String log, Long exitCode) {

    public StepFailure {
        evidence = List.copyOf(evidence);
    }
}
