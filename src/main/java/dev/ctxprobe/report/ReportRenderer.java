package dev.ctxprobe.report;

import java.util.List;

/** Turns read results into one report document; one implementation per {@link Format}. */
interface ReportRenderer {
    String render(List<ReportInput> inputs);
}
