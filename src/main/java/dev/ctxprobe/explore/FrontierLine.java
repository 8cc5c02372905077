package dev.ctxprobe.explore;

import dev.ctxprobe.engine.FailureClass;
import java.util.Locale;
import java.util.stream.Collectors;

/** The one-line console answer of a backend (spec 05), e.g. {@code vllm   max 998,912 tokens ...}. */
public final class FrontierLine {

    private FrontierLine() {}

    /**
     * Formats one backend's answer.
     *
     * @param backend the backend's name, padded to {@code nameWidth} so lines of several backends align
     * @param nextFailure the failure class of {@code f.minFailedTarget()}, or null when unknown
     * @param ttftSecondsAtMax TTFT at {@code f.maxOkTarget()}, or null to leave it out
     */
    public static String line(
            String backend, int nameWidth, Frontier f, FailureClass nextFailure, Double ttftSecondsAtMax) {
        StringBuilder line = new StringBuilder(backend);
        line.append(" ".repeat(Math.max(0, nameWidth - backend.length()))).append(' ');
        String because = nextFailure == null ? "" : ": " + nextFailure.id();
        if (f.maxOkTarget() != null) {
            line.append("max ").append(tokens(f.maxOkTarget())).append(" tokens");
            if (f.minFailedTarget() != null) {
                line.append(" (next ")
                        .append(tokens(f.minFailedTarget()))
                        .append(" fails")
                        .append(because)
                        .append(')');
            } else if (Frontier.FULL_RANGE_FITS.equals(f.stoppedBecause())) {
                line.append(" (full range fits)");
            }
        } else if (f.minFailedTarget() != null) {
            line.append("nothing fits (smallest tried ")
                    .append(tokens(f.minFailedTarget()))
                    .append(" fails")
                    .append(because)
                    .append(')');
        } else {
            line.append("no answer");
        }
        line.append("  ").append(f.launches()).append(f.launches() == 1 ? " launch" : " launches");
        if (!f.nonMonotonic().isEmpty()) {
            line.append("  non-monotonic: ")
                    .append(f.nonMonotonic().stream().map(FrontierLine::tokens).collect(Collectors.joining("; ")))
                    .append(" failed below the max");
        }
        if (f.stoppedBecause() != null
                && !Frontier.FULL_RANGE_FITS.equals(f.stoppedBecause())
                && !Frontier.NOTHING_FITS.equals(f.stoppedBecause())) {
            line.append("  stopped: ").append(f.stoppedBecause());
        }
        if (ttftSecondsAtMax != null) {
            line.append(String.format(Locale.ROOT, "  TTFT %.1f s", ttftSecondsAtMax));
        }
        return line.toString();
    }

    private static String tokens(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
