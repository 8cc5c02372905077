package dev.ctxprobe.report;

import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The name of each (results file, backend) pair in tables and chart legends: the backend alone for one
 * input, {@code hardware / backend} when comparing, with the run id added where two inputs would share a name.
 */
final class Labels {
    private final Map<ResultSet, String> setNames = new IdentityHashMap<>();
    private final boolean comparing;

    private Labels(List<ResultSet> sets) {
        this.comparing = sets.size() > 1;
        Map<String, Integer> uses = new HashMap<>();
        sets.forEach(s -> uses.merge(baseName(s), 1, Integer::sum));
        Map<String, Integer> withRun = new HashMap<>();
        sets.forEach(s -> withRun.merge(baseName(s) + " (" + s.run().runId() + ")", 1, Integer::sum));
        for (int i = 0; i < sets.size(); i++) {
            ResultSet set = sets.get(i);
            String name = baseName(set);
            if (uses.get(name) > 1) {
                String runName = name + " (" + set.run().runId() + ")";
                // The same run given twice still needs two names: charts key their series by name.
                name = set.run().runId().isEmpty() || withRun.get(runName) > 1
                        ? name + " (input " + (i + 1) + ")"
                        : runName;
            }
            setNames.put(set, name);
        }
    }

    static Labels of(List<ResultSet> sets) {
        return new Labels(sets);
    }

    /** True when several inputs are shown together. */
    boolean comparing() {
        return comparing;
    }

    /** The name of one input: its hardware, else its experiment, else its file. */
    String of(ResultSet set) {
        return setNames.get(set);
    }

    /** The name of one backend of one input, as legends and frontier lines show it. */
    String of(ResultSet set, String backend) {
        return comparing ? of(set) + " / " + backend : backend;
    }

    private static String baseName(ResultSet set) {
        if (!set.run().hardware().isEmpty()) {
            return set.run().hardware();
        }
        if (!set.run().experiment().isEmpty()) {
            return set.run().experiment();
        }
        return set.source();
    }
}
