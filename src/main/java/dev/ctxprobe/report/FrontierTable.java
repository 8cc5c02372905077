package dev.ctxprobe.report;

import java.util.ArrayList;
import java.util.List;

/**
 * The frontier table text and Markdown show below the frontier lines: what the line leaves out, one row each. The
 * cause comes last: a seed's is a sentence, and in a text table only the last column needs no padding.
 */
final class FrontierTable {
    private FrontierTable() {}

    static List<String> headers(Labels labels) {
        List<String> h = new ArrayList<>();
        if (labels.comparing()) {
            h.add("hardware");
        }
        h.addAll(List.of(
                "backend",
                "max passing",
                "smallest failing",
                "launches",
                "TTFT at max",
                "prefill tok/s at max (target / TTFT)",
                "bracket",
                "server stated max",
                "non-monotonic",
                "search",
                "stopped because",
                "cause"));
        return h;
    }

    static List<Boolean> numeric(Labels labels) {
        List<Boolean> n = new ArrayList<>();
        if (labels.comparing()) {
            n.add(false);
        }
        n.addAll(List.of(false, true, true, true, true, true, true, true, false, false, false, false));
        return n;
    }

    static List<String> row(Answer a, Labels labels) {
        List<String> r = new ArrayList<>();
        if (labels.comparing()) {
            r.add(TerminalText.line(labels.of(a.input())));
        }
        Double ttft = a.ttftAtMaxMs();
        r.addAll(List.of(
                TerminalText.line(a.backend()),
                Cells.tokens(a.frontier().maxOkTarget()),
                Cells.tokens(a.frontier().minFailedTarget()),
                Integer.toString(a.frontier().launches()),
                ttft == null ? "" : Cells.duration(ttft),
                Cells.whole(a.prefillAtMax()),
                Cells.percent(a.frontier().bracketRatio()),
                Cells.tokens(a.frontier().predictedMax()),
                a.nonMonotonicText(),
                a.search(),
                a.stoppedBecause(),
                a.cause()));
        return r;
    }
}
