package dev.ctxprobe.roofline;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.Roofline;
import dev.ctxprobe.results.Scenario;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A finished step checked against physics (docs/results.md, "% of roofline"): its mean TTFT against the prefill
 * floor of its backend, and the cached prompt tokens its server reported. What is faster than the hardware, or
 * served from a cache, is named among the step's warnings; the step's outcome stays what it was.
 */
public final class StepRoofline {
    private StepRoofline() {}

    /** Fewer than this many floors in {@code request_s}: no real prefill of the length could finish in it. */
    static final double TIMEOUT_FLOORS = 3;

    /**
     * A timed-out step whose {@code request_s} was below {@link #TIMEOUT_FLOORS} times the floor at its length: its
     * error says that the timeout, not the server, is too short (docs/plan.md); null for any other step.
     */
    private static Scenario tooShortATimeout(PrefillFloor floor, Scenario s, Duration requestTimeout) {
        Double floorS = floor == null ? null : floor.floorS(s.targetLen());
        if (floorS == null || requestTimeout == null || !s.outcome().equals(Outcome.failed(FailureClass.TIMEOUT))) {
            return null;
        }
        double timeoutS = requestTimeout.toMillis() / 1000.0;
        if (timeoutS >= TIMEOUT_FLOORS * floorS) {
            return null;
        }
        String why = String.format(
                Locale.ROOT,
                "timeouts.request_s %s s is below what this hardware can do at this length: the prefill floor of %,d"
                        + " tokens is %.3f s (%s) and a real prefill takes longer; set request_s from ctxprobe plan's"
                        + " floor (docs/plan.md)",
                new DecimalFormat("0.###", DecimalFormatSymbols.getInstance(Locale.ROOT)).format(timeoutS),
                s.targetLen(),
                floorS,
                floor.at(s.targetLen()).getFirst().assumption());
        // The judge's detail says the server hangs or the prefill is slower than request_s: here it is the latter.
        Scenario.Failure f = s.failure();
        String observed = f == null || f.detail() == null ? "" : f.detail();
        int guess = observed.indexOf("; the server hangs");
        String detail = (guess < 0 ? observed : observed.substring(0, guess)) + "; " + why;
        Scenario.Failure detailed = f == null
                ? null
                : new Scenario.Failure(
                        f.phase(), f.failureClass(), detail, f.evidence(), f.log(), f.exitCode(), f.verdictS());
        String error = s.error() == null ? "" : s.error();
        int colon = error.indexOf(": ");
        String where = colon < 0 ? s.outcome().id() : error.substring(0, colon);
        return s.toBuilder()
                .outcome(s.outcome(), where + ": " + detail, detailed)
                .build();
    }

    /** The warning of a step whose measured requests were partly served from the server's cache; null for none. */
    public static String cachedWarning(Scenario s) {
        long cached = 0;
        int requests = 0;
        for (Scenario.Request r : s.requests()) {
            if (!r.warmup() && r.cachedTokens() != null && r.cachedTokens() > 0) {
                cached += r.cachedTokens();
                requests++;
            }
        }
        if (cached == 0) {
            return null;
        }
        return String.format(
                Locale.ROOT,
                "the server reported %,d cached prompt tokens in %d measured request%s: ctxprobe's prompts are"
                        + " unique, so a prefix-cache hit means something is wrong (a shared prefix, a replayed"
                        + " request) and the TTFT is not a full prefill (docs/results.md)",
                cached,
                requests,
                requests == 1 ? "" : "s");
    }

    /** The warnings the console prints under a step's line: the roofline's flag and cached tokens. */
    public static List<String> physicsWarnings(Scenario s) {
        List<String> out = new ArrayList<>();
        if (s.roofline() != null && s.metrics() != null) {
            String w = PrefillFloor.warning(s.roofline(), s.metrics().ttftMs().mean() / 1000);
            if (w != null) {
                out.add(w);
            }
        }
        String cached = cachedWarning(s);
        if (cached != null) {
            out.add(cached);
        }
        return out;
    }

    /** A step's roofline in a few words for tables and the console: {@code 141.6% impossible}; null for none. */
    public static String cell(Scenario s) {
        Roofline r = s.roofline();
        if (r == null) {
            return null;
        }
        if (r.percent() == null) {
            return "floor unknown";
        }
        return PrefillFloor.percent(r.percent()) + (r.flagged() ? " " + r.flag() : "");
    }

    /**
     * {@code s} with its {@link Roofline} and warnings. A step that measured no prompt, or several at once, gets no
     * roofline: the floor is that of one prompt alone.
     *
     * @param floor the backend's floor; null when none was computed
     */
    public static Scenario judged(PrefillFloor floor, Scenario s, Duration requestTimeout) {
        Scenario timedOut = tooShortATimeout(floor, s, requestTimeout);
        return timedOut != null ? timedOut : judged(floor, s);
    }

    /** As {@link #judged(PrefillFloor, Scenario, Duration)}, for a step whose request timeout is not known. */
    public static Scenario judged(PrefillFloor floor, Scenario s) {
        List<String> warnings = new ArrayList<>(s.warnings());
        String cached = cachedWarning(s);
        if (cached != null) {
            warnings.add(cached);
        }
        Roofline roofline = null;
        boolean measured = s.outcome().passed()
                && s.metrics() != null
                && s.metrics().ttftMs() != null
                && s.metrics().ttftMs().mean() > 0
                && s.concurrency() == 1;
        if (floor != null && measured) {
            double ttftS = s.metrics().ttftMs().mean() / 1000;
            roofline = floor.judge(s.targetLen(), ttftS);
            String warning = PrefillFloor.warning(roofline, ttftS);
            if (warning != null) {
                warnings.add(warning);
            }
        }
        if (roofline == null && cached == null) {
            return s;
        }
        return s.toBuilder().warnings(warnings).roofline(roofline).build();
    }
}
