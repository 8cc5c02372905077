package dev.ctxprobe.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Where a serving engine shows its progress on the requests it holds, and how to read it: an endpoint asked while a
 * step's requests wait, whose {@link Sample#signature()} changes whenever the engine did any work on them (a prefill
 * chunk, a decoded token, a KV block). A server that holds requests and shows no change for {@code
 * timeouts.progress_s} makes no progress (docs/failures.md, "Verdicts before the timeout").
 *
 * @param path the GET path, e.g. {@code /metrics} or {@code /slots}
 * @param read the body into a sample, empty where it shows nothing this reader knows
 */
public record Progress(String path, Function<String, Optional<Sample>> read) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * What the endpoint showed once.
     *
     * @param busy whether the server holds requests (running or waiting)
     * @param signature the values that change with any progress
     * @param shown the same in words, for the evidence
     * @param counts the engine's own count of the requests it runs and queues, for a concurrency probe's evidence
     *     (docs/search.md#held-at-once); null where the endpoint shows none
     */
    public record Sample(boolean busy, String signature, String shown, Counts counts) {}

    /**
     * The engine's own count at one read.
     *
     * @param running requests being generated (llama.cpp: slots processing)
     * @param waiting requests queued, not yet running; null where the engine does not show its queue
     * @param preemptions the engine's cumulative count of preemptions; null where it shows none (llama.cpp never
     *     preempts)
     */
    public record Counts(int running, Integer waiting, Long preemptions) {}

    /**
     * Prometheus gauges and counters: {@code running} and {@code waiting} count the requests held, {@code
     * preemptions} (may be null) the engine's cumulative preemptions, {@code moving} the values that move with work
     * (KV usage, token counters).
     */
    public static Progress metrics(String running, String waiting, String preemptions, List<String> moving) {
        List<String> busy = List.of(running, waiting);
        return new Progress("/metrics", body -> {
            double held = 0;
            boolean any = false;
            List<String> parts = new ArrayList<>();
            for (String name : busy) {
                Double v = sum(body, name);
                if (v != null) {
                    any = true;
                    held += v;
                    parts.add(name + "=" + fmt(v));
                }
            }
            for (String name : moving) {
                Double v = sum(body, name);
                if (v != null) {
                    parts.add(name + "=" + fmt(v));
                }
            }
            if (!any) {
                return Optional.empty();
            }
            String s = String.join(" ", parts);
            Double run = sum(body, running);
            Double wait = sum(body, waiting);
            Double pre = preemptions == null ? null : sum(body, preemptions);
            Counts counts = run == null
                    ? null
                    : new Counts(
                            (int) Math.round(run),
                            wait == null ? null : (int) Math.round(wait),
                            pre == null ? null : Math.round(pre));
            return Optional.of(new Sample(held > 0, s, s, counts));
        });
    }

    /**
     * llama.cpp's {@code GET /slots}: a slot is busy while {@code is_processing}; its task, the tokens it holds and
     * those it decoded move with its prefill and its decoding.
     */
    public static Progress llamaSlots() {
        return new Progress("/slots", body -> {
            JsonNode root;
            try {
                root = JSON.readTree(body);
            } catch (JacksonException notJson) {
                return Optional.empty();
            }
            if (!root.isArray() || root.isEmpty()) {
                return Optional.empty();
            }
            boolean busy = false;
            int processing = 0;
            List<String> parts = new ArrayList<>();
            for (JsonNode slot : root) {
                boolean working = slot.path("is_processing").asBoolean(false);
                busy |= working;
                processing += working ? 1 : 0;
                StringBuilder s = new StringBuilder("slot " + slot.path("id").asString("?"));
                s.append(working ? " processing" : " idle");
                for (String field : List.of("id_task", "n_past", "n_prompt_tokens_processed", "n_prompt_tokens")) {
                    if (slot.has(field)) {
                        s.append(' ')
                                .append(field)
                                .append('=')
                                .append(slot.get(field).asString());
                    }
                }
                JsonNode next = slot.path("next_token");
                JsonNode first = next.isArray() && !next.isEmpty() ? next.get(0) : next;
                if (first.has("n_decoded")) {
                    s.append(" n_decoded=").append(first.get("n_decoded").asString());
                }
                parts.add(s.toString());
            }
            String s = String.join("; ", parts);
            // A request no slot has taken yet waits in the server's task queue, which /slots does not show.
            return Optional.of(new Sample(busy, s, s, new Counts(processing, null, null)));
        });
    }

    /** The sum of every sample of {@code metric} (one per label set), or null where it has none. */
    private static Double sum(String body, String metric) {
        Double total = null;
        for (String line : body.split("\n")) {
            if (line.startsWith(metric + "{") || line.startsWith(metric + " ")) {
                String[] f = line.strip().split("\\s+");
                String value = f[f.length - 1];
                if (line.contains("}")) {
                    String after = line.substring(line.lastIndexOf('}') + 1).strip();
                    value = after.split("\\s+")[0];
                }
                try {
                    double v = Double.parseDouble(value);
                    total = total == null ? v : total + v;
                } catch (NumberFormatException notANumber) {
                    // A sample this reader cannot read shows nothing.
                }
            }
        }
        return total;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15
                ? Long.toString((long) v)
                : String.format(Locale.ROOT, "%.6g", v);
    }
}
