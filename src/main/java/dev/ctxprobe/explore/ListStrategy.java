package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Point;
import java.util.List;
import java.util.Optional;

/**
 * The {@code list} strategy (the seeds' loops, docs/search.md): the targets in order. With {@code stopAfterFailure}
 * the first failure ends the series; a failure that says nothing about length (port_busy, gpu_busy, a cluster's
 * queue_timeout or cluster_ended, client_error, interrupted) always does.
 */
public final class ListStrategy implements Strategy {

    private final Point.Series series;
    private final List<Long> targets;
    private final boolean stopAfterFailure;
    private final long pad;
    private final long promptAllowance;

    /**
     * @param pad {@code context_pad}, and {@code promptAllowance} the engine's prompt rule: what the answer's hint
     *     ({@code predicted_max}) subtracts from a capacity the engine named
     */
    public ListStrategy(
            Point.Series series, List<Long> targets, boolean stopAfterFailure, long pad, long promptAllowance) {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("the list strategy needs at least one target");
        }
        for (Long target : targets) {
            if (target == null || target <= 0) {
                throw new IllegalArgumentException(
                        "list target " + target + " is not a positive number of tokens, e.g. 65536");
            }
        }
        this.series = series;
        this.targets = List.copyOf(targets);
        this.stopAfterFailure = stopAfterFailure;
        this.pad = pad;
        this.promptAllowance = promptAllowance;
    }

    /** A list of single prompts, as the seeds ran it. */
    public ListStrategy(List<Long> targets, boolean stopAfterFailure) {
        this(Point.Series.of("backend"), targets, stopAfterFailure, 0, 0);
    }

    @Override
    public Point.Series series() {
        return series;
    }

    @Override
    public Optional<Point> next(List<Probe> probes) {
        checkBelongs(probes);
        if (stopped(probes) || probes.size() == targets.size()) {
            return Optional.empty();
        }
        return Optional.of(series.at(targets.get(probes.size())));
    }

    @Override
    public Frontier answer(List<Probe> probes) {
        return Strategy.hinted(probes, pad, promptAllowance);
    }

    @Override
    public List<Long> knownTargets() {
        return targets;
    }

    @Override
    public boolean searched() {
        return false;
    }

    @Override
    public long largestTarget() {
        return targets.stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    @Override
    public List<Point> skipped(List<Probe> probes) {
        checkBelongs(probes);
        return stopped(probes)
                ? targets.subList(probes.size(), targets.size()).stream()
                        .map(series::at)
                        .toList()
                : List.of();
    }

    @Override
    public Optional<String> resumeMismatch(List<Probe> probes) {
        List<Long> done = probes.stream().map(Probe::target).toList();
        if (done.size() > targets.size() || !targets.subList(0, done.size()).equals(done)) {
            return Optional.of(series.backend() + " has steps " + done + " where the list is " + targets);
        }
        return Optional.empty();
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
