package dev.ctxprobe.explore;

import java.util.List;
import java.util.OptionalLong;

/**
 * The {@code list} strategy (spec 05, the seeds): the targets in order. With {@code
 * stopAfterFailure} the first failure ends the backend; a failure that says nothing about length
 * (port_busy, gpu_busy, a cluster's queue_timeout or cluster_ended, client_error, interrupted) always does.
 */
public final class ListStrategy implements Strategy {

    private final List<Long> targets;
    private final boolean stopAfterFailure;

    public ListStrategy(List<Long> targets, boolean stopAfterFailure) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("the list strategy needs at least one target");
        }
        for (Long target : targets) {
            if (target == null || target <= 0) {
                throw new IllegalArgumentException(
                        "list target " + target + " is not a positive number of tokens, e.g. 65536");
            }
        }
        this.targets = List.copyOf(targets);
        this.stopAfterFailure = stopAfterFailure;
    }

    @Override
    public OptionalLong next(List<Probe> probes) {
        checkBelongs(probes);
        if (stopped(probes) || probes.size() == targets.size()) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(targets.get(probes.size()));
    }

    /** Targets that will never be probed because the backend stopped; empty while it goes on. */
    public List<Long> skipped(List<Probe> probes) {
        checkBelongs(probes);
        return stopped(probes) ? List.copyOf(targets.subList(probes.size(), targets.size())) : List.of();
    }

    private boolean stopped(List<Probe> probes) {
        return probes.stream()
                .anyMatch(p -> p.outcome().endsSearch()
                        || (stopAfterFailure && p.outcome().failed()));
    }

    // A probe list that does not follow the targets means the runner mixed up backends or files.
    private void checkBelongs(List<Probe> probes) {
        if (probes.size() > targets.size()) {
            throw new IllegalStateException(probes.size() + " probes for a list of " + targets.size()
                    + " targets: they belong to another list");
        }
        for (int i = 0; i < probes.size(); i++) {
            if (probes.get(i).target() != targets.get(i)) {
                throw new IllegalStateException(
                        "probe " + (i + 1) + " has target " + probes.get(i).target()
                                + " but the list's target " + (i + 1) + " is " + targets.get(i)
                                + ": the probes belong to another list");
            }
        }
    }
}
