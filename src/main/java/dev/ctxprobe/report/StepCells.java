package dev.ctxprobe.report;

import java.util.List;

/** The step table's columns as text and Markdown show them (one line per step, raw values from the file). */
final class StepCells {
    static final List<String> HEADERS = List.of(
            "backend", "target", "max_model_len", "outcome", "TTFT ms", "e2e ms", "input tok/s", "error / cause");

    /** Which columns hold numbers (right-aligned). */
    static final List<Boolean> NUMERIC = List.of(false, true, true, false, true, true, true, false);

    private StepCells() {}

    static List<String> of(ScenarioRow row) {
        StepMetrics m = row.metrics();
        return List.of(
                Cells.oneLine(row.backend()),
                Cells.tokens(row.targetLen()),
                Cells.tokens(row.maxModelLen()),
                Cells.oneLine(row.outcome()),
                m == null || m.ttftMs() == null
                        ? ""
                        : Cells.oneDecimal(m.ttftMs().mean()),
                m == null || m.e2eMs() == null ? "" : Cells.oneDecimal(m.e2eMs().mean()),
                m == null ? "" : Cells.whole(m.inputTokenThroughput()),
                Cells.oneLine(causeText(row)));
    }

    /** Why a step failed in words: the outcome column already names the class, so the sentence alone. */
    static String causeText(ScenarioRow row) {
        if (row.success()) {
            return row.error() == null ? "" : row.error();
        }
        String explanation = row.explanation();
        return explanation.isEmpty() ? row.cause() : explanation;
    }
}
