package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Scenario;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One backend's answer as every format leads with it: the input and backend it belongs to, their label, and the
 * frontier (the file's, or the one the steps show).
 */
record Answer(ReportInput input, String backend, String label, Frontier frontier) {

    static List<Answer> of(List<ReportInput> inputs, Labels labels) {
        List<Answer> answers = new ArrayList<>();
        for (ReportInput input : inputs) {
            for (String backend : input.backends()) {
                answers.add(new Answer(input, backend, labels.of(input, backend), input.frontier(backend)));
            }
        }
        return answers;
    }

    /** The frontier lines of all answers, names padded so the answers align, as the console prints them. */
    static List<String> lines(List<Answer> answers) {
        int width = answers.stream()
                .mapToInt(a -> TerminalText.line(a.label()).length())
                .max()
                .orElse(0);
        return answers.stream()
                .flatMap(a -> java.util.stream.Stream.concat(
                        java.util.stream.Stream.of(
                                FrontierLine.line(TerminalText.line(a.label()), width + 2, a.frontier(), a.steps())),
                        FrontierLine.surface(width + 2, a.frontier(), a.steps()).stream()))
                .toList();
    }

    List<Scenario> steps() {
        return input.steps(backend);
    }

    boolean derived() {
        return input.derived(backend);
    }

    /** Why the smallest failing target failed: its class, or a seed's sentence. */
    String cause() {
        return FrontierLine.cause(frontier, steps());
    }

    /** The mean TTFT at the largest passing target, or null. */
    Double ttftAtMaxMs() {
        return FrontierLine.ttftAtMaxMs(frontier, steps());
    }

    /** The prefill rate (target / mean TTFT) at the largest passing target, or null. */
    Double prefillAtMax() {
        Double ttft = ttftAtMaxMs();
        return ttft == null || frontier.maxOkTarget() == null ? null : StepFacts.rate(frontier.maxOkTarget(), ttft);
    }

    /** The targets that failed below a pass, e.g. {@code 29,184, 30,208}; empty when fit was monotonic. */
    String nonMonotonicText() {
        return frontier.nonMonotonic().stream().map(Cells::tokens).collect(Collectors.joining(", "));
    }

    /** How the answer was found: {@code frontier search, restart on_failure}, or that it was read off the steps. */
    String search() {
        if (derived()) {
            return "from the steps";
        }
        List<String> parts = new ArrayList<>();
        if (frontier.strategy() != null) {
            parts.add(TerminalText.line(frontier.strategy()));
        }
        if (frontier.mode() != null) {
            parts.add("restart " + TerminalText.line(frontier.mode()));
        }
        return String.join(", ", parts);
    }

    /** Why the search stopped when it says more than the line: empty for a converged search. */
    String stoppedBecause() {
        return TerminalText.line(frontier.stoppedBecause());
    }
}
