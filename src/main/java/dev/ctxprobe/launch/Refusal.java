package dev.ctxprobe.launch;

import dev.ctxprobe.results.FailureClass;
import java.util.List;

/**
 * Why a launcher will not launch now (the port is taken, accelerator memory is still held) or could not start the
 * command at all: the failure class, one sentence saying what to do, and what proves it.
 */
public record Refusal(FailureClass failureClass, String detail, List<String> evidence) {
    public Refusal {
        evidence = List.copyOf(evidence);
    }
}
