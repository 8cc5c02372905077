package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The least time a prefill of T tokens can take on a backend's devices (docs/results.md, "% of roofline"): the
 * model's FLOPs for T tokens, from its linear work and its attention terms, over the devices' dense peak. Written
 * beside the prediction in results.json so that every step's {@link Roofline} can be checked by hand.
 *
 * @param model what the work was read from (a config.json, a GGUF header, a known model)
 * @param linearFlopsPerToken {@code 2 x} the parameters a token passes through
 * @param linear how the linear work was found, in words
 * @param terms the attention and indexer work, each a sum over the prompt's positions
 * @param device the device whose peak is used
 * @param devices how many of them the prefill is divided over; null when unknown
 * @param peaks one device's dense peak per dtype of the math, fastest first, each with its source
 * @param assumptions what the floor takes for granted and what it leaves out
 * @param unknown why no floor can be given (an unknown peak, a model whose work is not known); null when known
 * @param targets the targets {@code plan} shows the floor at (the sweep's, the predicted one, max); empty for none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PrefillFloor(
        String model,
        Double linearFlopsPerToken,
        String linear,
        List<Term> terms,
        String device,
        Integer devices,
        List<Peak> peaks,
        List<String> assumptions,
        String unknown,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Long> targets) {

    public static final String LINEAR = "linear";
    public static final String ATTENTION = "attention";
    public static final String INDEXER = "indexer";

    public PrefillFloor {
        terms = terms == null ? List.of() : List.copyOf(terms);
        peaks = peaks == null ? List.of() : List.copyOf(peaks);
        assumptions = assumptions == null ? List.of() : List.copyOf(assumptions);
        targets = targets == null ? List.of() : List.copyOf(targets);
    }

    /** This floor, shown at {@code at} by {@code plan}. */
    public PrefillFloor withTargets(List<Long> at) {
        return new PrefillFloor(
                model, linearFlopsPerToken, linear, terms, device, devices, peaks, assumptions, unknown, at);
    }

    /**
     * Work that grows with the prompt: {@code layers x flopsPerRow x sum over t = 1..T of min(t / ratio, cap)}, the
     * rows a token at position t attends to (or scores), e.g. every earlier token (ratio 1, no cap), a sliding
     * window (ratio 1, cap = window), the compressed rows of a ratio-4 layer ({@code ratio 4}).
     *
     * @param part {@code attention} or {@code indexer}
     * @param label which layers, in words
     * @param cap the most rows a token reaches; null for no bound
     */
    public record Term(String part, String label, int layers, double flopsPerRow, double ratio, Double cap) {

        /** The term's FLOPs for a prompt of {@code tokens}, summed in closed form. */
        public double flops(long tokens) {
            return layers * flopsPerRow * rows(tokens);
        }

        // sum_{t=1..T} min(t/r, c): the first m = min(T, floor(r*c)) positions grow, the rest are capped.
        double rows(long tokens) {
            double t = tokens;
            double m = cap == null ? t : Math.min(t, Math.floor(ratio * cap));
            double capped = cap == null ? 0 : (t - m) * cap;
            return m * (m + 1) / (2 * ratio) + capped;
        }
    }

    /** One device's dense peak (no sparsity) for a dtype of the math, in TFLOPS, and where the figure comes from. */
    public record Peak(String dtype, double tflops, String source) {}

    /** A floor that cannot be given, and why. */
    public static PrefillFloor unknown(String model, String device, Integer devices, String why) {
        return new PrefillFloor(model, null, null, List.of(), device, devices, List.of(), List.of(), why, List.of());
    }

    /** True when a floor can be computed. */
    @JsonIgnore
    public boolean known() {
        return unknown == null && linearFlopsPerToken != null && devices != null && devices > 0 && !peaks.isEmpty();
    }

    /** The parts of the model there is work for: linear, attention, and the indexer when the model has one. */
    @JsonIgnore
    public List<String> parts() {
        Set<String> parts = new LinkedHashSet<>();
        parts.add(LINEAR);
        terms.forEach(t -> parts.add(t.part()));
        return List.copyOf(parts);
    }

    /** The FLOPs of a prefill of {@code tokens} counting only {@code parts}. */
    public double flops(long tokens, List<String> parts) {
        double total = parts.contains(LINEAR) ? linearFlopsPerToken * tokens : 0;
        for (Term t : terms) {
            if (parts.contains(t.part())) {
                total += t.flops(tokens);
            }
        }
        return total;
    }

    /**
     * The floor at {@code tokens} under each assumption that matters: per dtype (fastest first), every part counted,
     * then, for a model with an indexer, the indexer left out. The first is the headline.
     */
    public List<Roofline.Floor> at(long tokens) {
        if (!known()) {
            return List.of();
        }
        List<List<String>> countings = new ArrayList<>();
        countings.add(parts());
        if (parts().contains(INDEXER)) {
            countings.add(parts().stream().filter(p -> !p.equals(INDEXER)).toList());
        }
        List<Roofline.Floor> floors = new ArrayList<>();
        for (Peak peak : peaks) {
            for (List<String> counted : countings) {
                double flops = flops(tokens, counted);
                double seconds = flops / (peak.tflops() * 1e12 * devices);
                floors.add(new Roofline.Floor(
                        peak.dtype(), String.join("+", counted), peak.tflops(), devices, flops, seconds, null, null));
            }
        }
        return floors;
    }

    /** The headline floor at {@code tokens} in seconds (every part, fastest dtype); null when unknown. */
    public Double floorS(long tokens) {
        List<Roofline.Floor> floors = at(tokens);
        return floors.isEmpty() ? null : floors.getFirst().floorS();
    }

    /** A prefill of {@code tokens} measured at {@code ttftS} seconds against this floor. */
    public Roofline judge(long tokens, double ttftS) {
        if (!known()) {
            return Roofline.unknown(unknown != null ? unknown : "the floor is not known");
        }
        List<Roofline.Floor> floors =
                at(tokens).stream().map(f -> f.measured(ttftS)).toList();
        Roofline.Floor head = floors.getFirst();
        return new Roofline(head.percent(), head.flag(), head.floorS(), head.assumption(), floors, null);
    }

    /** The one sentence a flagged step carries among its warnings; null when the step is not flagged. */
    public static String warning(Roofline r, double ttftS) {
        if (r == null || !r.flagged()) {
            return null;
        }
        String how = Roofline.IMPOSSIBLE.equals(r.flag())
                ? "faster than the hardware can compute this prompt (above 100%)"
                : "above the best published prefill efficiency (about " + (int) Roofline.SUSPECT_PERCENT + "%)";
        return String.format(
                Locale.ROOT,
                "%s of roofline: TTFT %.3f s against a floor of %.3f s (%s) is %s; a prefix-cache hit, a truncated"
                        + " prompt, or a wrong hardware or model declaration can cause it (docs/results.md)",
                percent(r.percent()),
                ttftS,
                r.floorS(),
                r.assumption(),
                how);
    }

    /** A percentage as the console and the reports show it: {@code 141.6%}. */
    public static String percent(double p) {
        return String.format(Locale.ROOT, p >= 10 ? "%.1f%%" : "%.2f%%", p);
    }
}
