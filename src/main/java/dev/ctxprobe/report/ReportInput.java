package dev.ctxprobe.report;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Metadata;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One input of a report: the results file as the user named it, with the document read from it.
 *
 * @param source the file's path as given, shown in reports (so they do not depend on where they are made)
 * @param document the file's document, every measured step with its "% of roofline"
 * @param label the name the user gave the run ({@code report --label}), which tables and legends use instead of its
 *     hardware; null for none
 */
public record ReportInput(String source, ResultDocument document, String label) {

    /** Steps without a recorded roofline get one from what the file names (docs/results.md, % of roofline). */
    public ReportInput {
        document = Rooflines.filled(document);
        label = label == null || label.isBlank() ? null : label.strip();
    }

    /** An input named by its hardware, experiment or file. */
    public ReportInput(String source, ResultDocument document) {
        this(source, document, null);
    }

    /** The same input under the name the user gave it. */
    public ReportInput labelled(String name) {
        return new ReportInput(source, document, name);
    }

    /** The backends in the order the file first names them (steps, then frontier entries). */
    public List<String> backends() {
        Set<String> names = new LinkedHashSet<>();
        document.scenarios().forEach(s -> names.add(s.backend()));
        names.addAll(document.frontier().keySet());
        return new ArrayList<>(names);
    }

    /** The steps of one backend, in execution order. */
    public List<Scenario> steps(String backend) {
        return document.scenariosOf(backend);
    }

    /**
     * The answer for one backend: the file's frontier entry, or, where the file has none (a seed, a backend still
     * running), what its launched steps show.
     */
    public Frontier frontier(String backend) {
        Frontier written = document.frontier().get(backend);
        return written != null ? written : Frontier.ofSteps(steps(backend));
    }

    /** True when the answer for the backend comes from its steps, not from the file's frontier section. */
    public boolean derived(String backend) {
        return !document.frontier().containsKey(backend);
    }

    Metadata metadata() {
        return document.metadata();
    }

    /** True for a ctxprobe run that has not written {@code finished_at} (yet): it is going, or was stopped. */
    boolean inProgress() {
        return metadata().tool() != null && metadata().finishedAt() == null;
    }

    /**
     * The engine of one backend: the seeds join backends and engines with {@code +} in the same order ({@code
     * sglang} runs {@code sglang-xpu} on the P800), so the position maps one to the other.
     */
    String engineOf(String backend) {
        String engines = Cells.text(metadata().engine());
        String[] b = Cells.text(metadata().backend()).split("\\+");
        String[] e = engines.split("\\+");
        if (b.length == e.length) {
            for (int i = 0; i < b.length; i++) {
                if (b[i].equals(backend)) {
                    return e[i];
                }
            }
        }
        return engines;
    }
}
