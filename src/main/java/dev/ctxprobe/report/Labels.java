package dev.ctxprobe.report;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The name of each (results file, backend) pair in tables and chart legends: the backend alone for one
 * input, {@code hardware / backend} when comparing (the run's {@code --label} instead of its hardware when given),
 * with the run id added where two inputs would share a name.
 */
final class Labels {
    private final Map<ReportInput, String> inputNames = new IdentityHashMap<>();
    private final boolean comparing;

    private Labels(List<ReportInput> inputs) {
        this.comparing = inputs.size() > 1;
        Map<String, Integer> uses = new HashMap<>();
        inputs.forEach(s -> uses.merge(baseName(s), 1, Integer::sum));
        Map<String, Integer> withRun = new HashMap<>();
        inputs.forEach(s -> withRun.merge(baseName(s) + " (" + runId(s) + ")", 1, Integer::sum));
        for (int i = 0; i < inputs.size(); i++) {
            ReportInput input = inputs.get(i);
            String name = baseName(input);
            if (uses.get(name) > 1) {
                String runName = name + " (" + runId(input) + ")";
                // The same run given twice still needs two names: charts key their series by name.
                name = runId(input).isEmpty() || withRun.get(runName) > 1 ? name + " (input " + (i + 1) + ")" : runName;
            }
            inputNames.put(input, name);
        }
    }

    static Labels of(List<ReportInput> inputs) {
        return new Labels(inputs);
    }

    /** True when several inputs are shown together. */
    boolean comparing() {
        return comparing;
    }

    /** The name of one input: its label, else its hardware, else its experiment, else its file. */
    String of(ReportInput input) {
        return inputNames.get(input);
    }

    /** The name of one backend of one input, as legends and frontier lines show it. */
    String of(ReportInput input, String backend) {
        return comparing ? of(input) + " / " + backend : backend;
    }

    private static String runId(ReportInput input) {
        return Cells.text(input.metadata().runId());
    }

    private static String baseName(ReportInput input) {
        if (input.label() != null) {
            return input.label();
        }
        String hardware = Cells.text(input.metadata().hardware());
        if (!hardware.isEmpty()) {
            return hardware;
        }
        String experiment = Cells.text(input.metadata().experiment());
        return experiment.isEmpty() ? input.source() : experiment;
    }
}
