package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The answer for one backend (the results' {@code frontier} entry): the largest target a real request proved and
 * the smallest failing one above it, taken from attempts only: nothing is inferred from a pass above or a failure
 * below.
 *
 * @param maxOkTarget the largest target that passed, or null
 * @param minFailedTarget the smallest target above {@code maxOkTarget} whose failure bounds the length (the
 *     smallest such failure when nothing passed), or null
 * @param bracketRatio {@code (minFailed - maxOk) / maxOk}; null unless both exist
 * @param launches server launches spent
 * @param predictedMax the best capacity hint converted to a target (unaligned), or null
 * @param nonMonotonic length failures below {@code maxOkTarget}, ascending
 * @param mode {@code per_target} or {@code on_failure}: the two answer slightly different questions
 * @param strategy {@code list} or {@code frontier}
 * @param stoppedBecause null (converged, or still running), {@link #FULL_RANGE_FITS}, {@link #NOTHING_FITS},
 *     {@link #MAX_LAUNCHES}, {@code interrupted}, or the id of the failure class that ended the search
 * @param predicted what {@code ctxprobe plan} predicted before the first launch, with its inputs, beside the
 *     measured answer; null when nothing was predicted (a file from before predictions, an endpoint already running)
 * @param correct the frontier of right answers beside the frontier of served ones, for a backend with {@code check:
 *     passkey}; null otherwise
 * @param params the values of the backend's matrix cell, as on its scenarios; written only for a cell
 * @param surface the capacity map (docs/search.md#the-capacity-map): per concurrency above 1, the largest target
 *     whose requests were all served and held at once; written only when {@code sweep.concurrency} asks for it
 */
public record Frontier(
        Long maxOkTarget,
        Long minFailedTarget,
        Double bracketRatio,
        int launches,
        Long predictedMax,
        List<Long> nonMonotonic,
        String mode,
        String strategy,
        String stoppedBecause,
        BackendPrediction predicted,
        @JsonInclude(JsonInclude.Include.NON_NULL) Correct correct,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> params,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Surface> surface) {

    public static final String FULL_RANGE_FITS = "full range fits";
    public static final String NOTHING_FITS = "nothing fits";
    public static final String MAX_LAUNCHES = "max_launches";
    public static final String INTERRUPTED = "interrupted";

    public Frontier {
        nonMonotonic = nonMonotonic == null ? List.of() : List.copyOf(nonMonotonic);
        params = params == null || params.isEmpty()
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(params));
        surface = surface == null ? List.of() : List.copyOf(surface);
    }

    /**
     * One level of the capacity map: N requests sent at once, searched below the single-prompt frontier.
     *
     * @param concurrency the requests sent at once
     * @param maxOkTarget the largest target whose N requests were all served and held at once, or null
     * @param minFailedTarget the smallest target above it that was not (or failed otherwise), or null
     * @param cause the failure class of {@code minFailedTarget}'s step, e.g. {@code not_concurrent}; null without
     * @param detail that step's detail: queued, preempted, more requests than slots; null without
     * @param predictedTarget where the level's search began: the engine's capacity arithmetic, or the
     *     single-prompt frontier over N; null when the level was not searched
     * @param launches servers launched for this level that no earlier level had launched
     * @param stoppedBecause why the level's search ended early (as {@link Frontier#stoppedBecause()}), or null
     */
    public record Surface(
            int concurrency,
            Long maxOkTarget,
            Long minFailedTarget,
            String cause,
            String detail,
            Long predictedTarget,
            int launches,
            String stoppedBecause) {}

    /** The answer of a backend without a matrix and without a frontier of right answers. */
    public Frontier(
            Long maxOkTarget,
            Long minFailedTarget,
            Double bracketRatio,
            int launches,
            Long predictedMax,
            List<Long> nonMonotonic,
            String mode,
            String strategy,
            String stoppedBecause,
            BackendPrediction predicted) {
        this(
                maxOkTarget,
                minFailedTarget,
                bracketRatio,
                launches,
                predictedMax,
                nonMonotonic,
                mode,
                strategy,
                stoppedBecause,
                predicted,
                null,
                Map.of(),
                List.of());
    }

    /**
     * Where a backend's served steps answered their pass key (docs/search.md#the-frontier-of-right-answers): taken
     * from the steps as the served frontier is from the attempts.
     *
     * @param maxCorrectTarget the largest served target whose keys all came back, or null
     * @param minWrongTarget the smallest served target above it with a key that did not, or null
     * @param notChecked served targets that were not checked, ascending
     * @param notCheckedReason why the first of them was not, or null
     * @param atFrontier the answers at {@code check.depths} of the largest target that asked them (the served
     *     frontier, unless its step was not checked); null when no step asked them
     */
    public record Correct(
            Long maxCorrectTarget,
            Long minWrongTarget,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Long> notChecked,
            @JsonInclude(JsonInclude.Include.NON_NULL) String notCheckedReason,
            @JsonInclude(JsonInclude.Include.NON_NULL) AtFrontier atFrontier) {

        public Correct {
            notChecked = notChecked == null ? List.of() : List.copyOf(notChecked);
        }

        /**
         * The answer at each depth of {@code check.depths}, asked at one target.
         *
         * @param target the step's target
         * @param depths the answers, in the order of {@code check.depths}
         */
        public record AtFrontier(long target, List<PasskeyAnswer.Depth> depths) {
            public AtFrontier {
                depths = List.copyOf(depths);
            }
        }

        /** The right answers of one backend's steps; null when no step has an answer. */
        public static Correct ofSteps(List<Scenario> steps) {
            Long maxCorrect = null;
            String reason = null;
            java.util.TreeSet<Long> notChecked = new java.util.TreeSet<>();
            boolean any = false;
            AtFrontier atFrontier = null;
            for (Scenario s : steps) {
                PasskeyAnswer a = s.answer();
                if (a == null) {
                    continue;
                }
                any = true;
                if (a.correct()) {
                    maxCorrect = maxCorrect == null ? s.targetLen() : Math.max(maxCorrect, s.targetLen());
                } else if (!a.wrong()) {
                    notChecked.add(s.targetLen());
                    reason = reason == null ? a.reason() : reason;
                }
                if (!a.depths().isEmpty() && (atFrontier == null || s.targetLen() > atFrontier.target())) {
                    atFrontier = new AtFrontier(s.targetLen(), a.depths());
                }
            }
            if (!any) {
                return null;
            }
            Long minWrong = null;
            for (Scenario s : steps) {
                if (s.answer() != null
                        && s.answer().wrong()
                        && (maxCorrect == null || s.targetLen() > maxCorrect)
                        && (minWrong == null || s.targetLen() < minWrong)) {
                    minWrong = s.targetLen();
                }
            }
            return new Correct(maxCorrect, minWrong, List.copyOf(notChecked), reason, atFrontier);
        }
    }

    /** One launched step as the answer sees it. */
    public record Attempt(long target, Outcome outcome) {}

    /**
     * Summarises attempts in execution order; {@code launches} is their number. Says "full range fits" when
     * something passed and no length failure lies above it, "nothing fits" when only length failures were seen,
     * and names the first failure that says nothing about length.
     */
    public static Frontier of(List<Attempt> attempts) {
        Long maxOk = null;
        String stopped = null;
        for (Attempt a : attempts) {
            if (a.outcome().passed()) {
                maxOk = maxOk == null ? a.target() : Math.max(maxOk, a.target());
            } else if (a.outcome().endsSearch() && stopped == null) {
                stopped = a.outcome().id();
            }
        }
        Long minFailed = null;
        for (Attempt a : attempts) {
            if (a.outcome().boundsLength()
                    && (maxOk == null || a.target() > maxOk)
                    && (minFailed == null || a.target() < minFailed)) {
                minFailed = a.target();
            }
        }
        long ok = maxOk == null ? Long.MIN_VALUE : maxOk;
        List<Long> nonMonotonic = attempts.stream()
                .filter(a -> a.outcome().boundsLength() && a.target() < ok)
                .map(Attempt::target)
                .distinct()
                .sorted()
                .toList();
        Double ratio = maxOk != null && minFailed != null ? (minFailed - maxOk) / (double) maxOk : null;
        if (stopped == null && maxOk != null && minFailed == null) {
            stopped = FULL_RANGE_FITS;
        } else if (stopped == null && maxOk == null && minFailed != null) {
            stopped = NOTHING_FITS;
        }
        return new Frontier(
                maxOk,
                minFailed,
                ratio,
                attempts.size(),
                null,
                nonMonotonic,
                null,
                null,
                stopped,
                null,
                null,
                Map.of(),
                List.of());
    }

    /** The answer the launched steps of one backend show (a file without a frontier section, such as a seed). */
    public static Frontier ofSteps(List<Scenario> steps) {
        return of(steps.stream()
                        .filter(s -> s.outcome().launched())
                        .map(Scenario::attempt)
                        .toList())
                .withCorrect(Correct.ofSteps(steps));
    }

    /** The same answer beside the frontier of right answers (null for none). */
    public Frontier withCorrect(Correct right) {
        return with(launches, predictedMax, mode, strategy, stoppedBecause, predicted, right, params);
    }

    public Frontier withLaunches(int n) {
        return with(n, predictedMax, mode, strategy, stoppedBecause, predicted, correct, params);
    }

    public Frontier withStoppedBecause(String reason) {
        return with(launches, predictedMax, mode, strategy, reason, predicted, correct, params);
    }

    public Frontier withPredictedMax(Long hinted) {
        return with(launches, hinted, mode, strategy, stoppedBecause, predicted, correct, params);
    }

    /** The same answer beside what was predicted for it before the first launch. */
    public Frontier withPredicted(BackendPrediction prediction) {
        return with(launches, predictedMax, mode, strategy, stoppedBecause, prediction, correct, params);
    }

    /** The same answer for the matrix cell of these values. */
    public Frontier withParams(Map<String, String> cell) {
        return with(launches, predictedMax, mode, strategy, stoppedBecause, predicted, correct, cell);
    }

    /** The same answer, saying which strategy and restart mode produced it. */
    public Frontier producedBy(String strategyId, String modeId) {
        return with(launches, predictedMax, modeId, strategyId, stoppedBecause, predicted, correct, params);
    }

    // The bracket comes from the attempts; what is said about the search around it changes.
    private Frontier with(
            int n,
            Long hinted,
            String modeId,
            String strategyId,
            String stopped,
            BackendPrediction prediction,
            Correct right,
            Map<String, String> cell) {
        return new Frontier(
                maxOkTarget,
                minFailedTarget,
                bracketRatio,
                n,
                hinted,
                nonMonotonic,
                modeId,
                strategyId,
                stopped,
                prediction,
                right,
                cell,
                surface);
    }

    /** The same answer with the capacity map beside it. */
    public Frontier withSurface(List<Surface> levels) {
        return new Frontier(
                maxOkTarget,
                minFailedTarget,
                bracketRatio,
                launches,
                predictedMax,
                nonMonotonic,
                mode,
                strategy,
                stoppedBecause,
                predicted,
                correct,
                params,
                levels);
    }
}
