package dev.ctxprobe.explore;

import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Point;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The {@code frontier} strategy (docs/search.md): after the curve's lengths (measured first, to draw the TTFT curve),
 * probe {@code max}; follow a capacity hint to just under
 * it and one {@code align} above; otherwise probe {@code min} and bisect between the largest pass
 * and the smallest failure above it until the bracket is within {@code precision}, one {@code
 * align} step wide, or {@code maxLaunches} are spent. A timeout at a capacity the server stated (vLLM's
 * scheduling hang) is checked one {@code align} below first.
 *
 * <p>With a start (the frontier {@code ctxprobe plan} predicted), the search probes it instead of {@code max}, then
 * one {@code align} above it: a right prediction is proved in two launches; a wrong one leaves a pass or a failure
 * the normal search goes on from.
 *
 * <p>Stateless: every decision is recomputed from the probes, so a resumed run continues where it
 * stopped, even from probes another strategy made (a failure below a pass is then left alone).
 */
public final class FrontierStrategy implements Strategy {

    private final Point.Series series;
    private final FrontierSettings settings;
    /** The first target instead of max, aligned and inside the bounds; null to start at max. */
    private final Long start;
    /** Lengths measured before the search, in order, each once. */
    private final List<Long> curve;
    /** The first probe at max leaves the length to the engine ({@code auto_first}). */
    private final boolean selfSizing;
    /** Max was lowered to the longest prompt an endpoint already running states it serves ({@link #within}). */
    private final boolean withinStated;

    /**
     * @param start the predicted frontier to start at (clamped to the bounds, aligned down); null for max
     * @param curve lengths measured first, whatever the search then does
     * @param selfSizing the search's first probe, at max, lets the engine fit its context to memory itself
     */
    public FrontierStrategy(
            Point.Series series, FrontierSettings settings, Long start, List<Long> curve, boolean selfSizing) {
        this(series, settings, start, curve, selfSizing, false);
    }

    private FrontierStrategy(
            Point.Series series,
            FrontierSettings settings,
            Long start,
            List<Long> curve,
            boolean selfSizing,
            boolean withinStated) {
        this.series = Objects.requireNonNull(series, "series");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.start = start == null || selfSizing
                ? null
                : Math.min(settings.highestTarget(), Math.max(settings.lowestTarget(), settings.alignDown(start)));
        this.curve = curve.stream().distinct().toList();
        this.selfSizing = selfSizing;
        this.withinStated = withinStated;
    }

    /** A search of single prompts without a curve. */
    public FrontierStrategy(FrontierSettings settings) {
        this(settings, null);
    }

    /** A search of single prompts without a curve, starting at {@code start} (null for max). */
    public FrontierStrategy(FrontierSettings settings, Long start) {
        this(Point.Series.of("backend"), settings, start, List.of(), false);
    }

    @Override
    public Strategy startingAt(long measured) {
        return selfSizing ? this : new FrontierStrategy(series, settings, measured, curve, false);
    }

    /**
     * The search with {@code max} lowered to {@code largestPrompt} and the curve's lengths above it left out
     * (docs/engines.md, openai); unchanged when the limit is above max or holds no aligned target from min.
     */
    @Override
    public Strategy within(long largestPrompt) {
        if (largestPrompt >= settings.max() || settings.alignDown(largestPrompt) < settings.lowestTarget()) {
            return this;
        }
        List<Long> inside =
                curve.stream().filter(target -> target <= largestPrompt).toList();
        return new FrontierStrategy(series, settings.withMax(largestPrompt), start, inside, selfSizing, true);
    }

    /** The first target after the curve: the start, or max. */
    public long firstTarget() {
        return start == null ? settings.highestTarget() : start;
    }

    @Override
    public Long start() {
        return start;
    }

    @Override
    public Point.Series series() {
        return series;
    }

    @Override
    public Optional<Point> next(List<Probe> probes) {
        // The search is stateless, so the curve's lengths simply count among its probes.
        for (long target : curve) {
            if (probes.stream().noneMatch(p -> p.target() == target)) {
                return Optional.of(series.at(target));
            }
        }
        if (probes.size() >= settings.maxLaunches()) {
            return Optional.empty();
        }
        OptionalLong next = choose(probes);
        if (next.isEmpty()) {
            next = chooseCorrect(probes);
        }
        return next.isPresent() ? Optional.of(series.at(next.getAsLong())) : Optional.empty();
    }

    /**
     * Once the served frontier is found, the frontier of right answers (docs/search.md#the-frontier-of-right-answers):
     * {@code min} when nothing was answered right yet, then bisection between the largest target answered right and
     * the smallest answered wrong above it, to the same precision. Empty for a backend whose steps are not checked.
     */
    private OptionalLong chooseCorrect(List<Probe> probes) {
        Set<Long> probed = new HashSet<>();
        Long lo = null;
        for (Probe p : probes) {
            if (p.outcome().endsSearch()) {
                return OptionalLong.empty();
            }
            probed.add(p.target());
            if (p.passed() && Boolean.TRUE.equals(p.correct()) && (lo == null || p.target() > lo)) {
                lo = p.target();
            }
        }
        Long up = null;
        for (Probe p : probes) {
            if (p.passed()
                    && Boolean.FALSE.equals(p.correct())
                    && (lo == null || p.target() > lo)
                    && (up == null || p.target() < up)) {
                up = p.target();
            }
        }
        if (up == null) {
            return OptionalLong.empty();
        }
        long next;
        if (lo == null) {
            next = settings.lowestTarget();
        } else if (converged(lo, up)) {
            return OptionalLong.empty();
        } else {
            long mid = settings.alignDown(lo + (up - lo) / 2);
            next = mid > lo ? mid : settings.alignDown(lo) + settings.align();
        }
        return next < up && !probed.contains(next) ? OptionalLong.of(next) : OptionalLong.empty();
    }

    @Override
    public List<Long> knownTargets() {
        List<Long> known = new ArrayList<>(curve);
        if (!known.contains(firstTarget())) {
            known.add(firstTarget());
        }
        return known;
    }

    @Override
    public boolean searched() {
        return true;
    }

    @Override
    public long largestTarget() {
        return settings.highestTarget();
    }

    @Override
    public boolean selfSizes(Point next, List<Probe> probes) {
        return selfSizing
                && next.target() == settings.highestTarget()
                && probes.stream().allMatch(p -> curve.contains(p.target()));
    }

    /** The largest aligned target whose launch would ask for no more than the fitted length, within the bounds. */
    @Override
    public long selfSizedTarget(long maxModelLen, long highest) {
        return Math.max(settings.lowestTarget(), Math.min(highest, settings.alignDown(maxModelLen - settings.pad())));
    }

    /** The bounds and alignment of this search. */
    public FrontierSettings settings() {
        return settings;
    }

    /**
     * The answer so far: {@link Frontier#of} with the best hint, plus {@link Frontier#MAX_LAUNCHES} when the
     * budget ran out before the search was done; while the search is still going, {@code stoppedBecause} is null.
     * Within a stated limit, a pass at the top is the answer, not a range that fits: no aligned target above it lies
     * inside what the endpoint states it serves.
     */
    @Override
    public Frontier answer(List<Probe> probes) {
        Frontier frontier = Strategy.hinted(probes, settings.pad(), settings.promptAllowance());
        if (withinStated && Frontier.FULL_RANGE_FITS.equals(frontier.stoppedBecause())) {
            frontier = frontier.withStoppedBecause(null);
        }
        if (choose(probes).isEmpty()) {
            return frontier;
        }
        return frontier.withStoppedBecause(probes.size() >= settings.maxLaunches() ? Frontier.MAX_LAUNCHES : null);
    }

    /** The next target ignoring the launch budget; empty when the search is done. */
    private OptionalLong choose(List<Probe> probes) {
        Set<Long> probed = new HashSet<>();
        Long lo = null;
        for (Probe p : probes) {
            if (p.outcome().endsSearch()) {
                return OptionalLong.empty();
            }
            probed.add(p.target());
            if (p.passed() && (lo == null || p.target() > lo)) {
                lo = p.target();
            }
        }
        long lowest = settings.lowestTarget();
        long highest = settings.highestTarget();
        if (lo != null && lo >= highest) {
            return OptionalLong.empty();
        }
        Long up = smallestFailureAbove(probes, lo == null ? lowest - 1 : lo);
        Bracket bracket = new Bracket(lo, up, lowest, highest, probed);
        boolean startOpen = start != null && bracket.admits(start);
        if (up == null) {
            if (startOpen) {
                return OptionalLong.of(start);
            }
            if (lo != null && (isHintTarget(probes, lo) || lo.equals(start))) {
                // The engine said lo is all it holds (it sized itself), or lo was predicted: the step above checks
                // that at once, or shows the prediction was low.
                OptionalLong above = bracket.offer(settings.alignDown(lo) + settings.align());
                if (above.isPresent()) {
                    return above;
                }
            }
            return bracket.offer(highest);
        }
        if (lo != null && converged(lo, up)) {
            return OptionalLong.empty();
        }
        OptionalLong below = belowAHang(probes, up, bracket);
        if (below.isPresent()) {
            return below;
        }
        OptionalLong hinted = hinted(probes, bracket);
        if (hinted.isPresent()) {
            // What an engine said about its own capacity outranks what was predicted.
            return hinted;
        }
        if (startOpen) {
            return OptionalLong.of(start);
        }
        if (lo == null) {
            // Nothing passed yet and no hint helps: min decides between "nothing fits" and bisection.
            return bracket.offer(lowest);
        }
        long stepAbove = settings.alignDown(lo) + settings.align();
        if (isHintTarget(probes, lo) || lo.equals(start)) {
            // The hint (or the prediction) was right at lo: one align above closes the bracket in a single launch.
            return bracket.offer(stepAbove);
        }
        long mid = settings.alignDown(lo + (up - lo) / 2);
        return bracket.offer(mid > lo ? mid : stepAbove);
    }

    /**
     * One align step below the smallest failure when that failure is a hang at a capacity the server stated: the
     * step just below answers whether the capacity itself is servable, where a bisection would spend launches on
     * a range the hang says nothing about.
     */
    private OptionalLong belowAHang(List<Probe> probes, long up, Bracket bracket) {
        boolean hang = probes.stream().anyMatch(p -> p.target() == up && p.hangAtCapacity());
        if (!hang) {
            return OptionalLong.empty();
        }
        long below = settings.alignDown(up - 1);
        return bracket.offer(below);
    }

    private boolean converged(long lo, long up) {
        long gap = up - lo;
        return gap <= settings.align() || gap <= settings.precision() * lo;
    }

    /** The most recent hint whose target lies inside the bracket and was not probed yet. */
    private OptionalLong hinted(List<Probe> probes, Bracket bracket) {
        for (int i = probes.size() - 1; i >= 0; i--) {
            Long target = alignedHintTarget(probes.get(i));
            if (target != null && bracket.admits(target)) {
                return OptionalLong.of(target);
            }
        }
        return OptionalLong.empty();
    }

    private boolean isHintTarget(List<Probe> probes, long target) {
        return probes.stream().anyMatch(p -> Objects.equals(alignedHintTarget(p), target));
    }

    private Long alignedHintTarget(Probe probe) {
        Long target = probe.hintTarget(settings.pad(), settings.promptAllowance());
        return target == null ? null : settings.alignDown(target);
    }

    private static Long smallestFailureAbove(List<Probe> probes, long floor) {
        Long up = null;
        for (Probe p : probes) {
            if (p.lengthFailure() && p.target() > floor && (up == null || p.target() < up)) {
                up = p.target();
            }
        }
        return up;
    }

    /** Where the next probe may go: above the largest pass, below the smallest failure above it. */
    private record Bracket(Long lo, Long up, long lowest, long highest, Set<Long> probed) {

        boolean admits(long target) {
            return target >= lowest
                    && target <= highest
                    && (lo == null || target > lo)
                    && (up == null || target < up)
                    && !probed.contains(target);
        }

        OptionalLong offer(long target) {
            return admits(target) ? OptionalLong.of(target) : OptionalLong.empty();
        }
    }
}
