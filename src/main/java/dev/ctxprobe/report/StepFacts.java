package dev.ctxprobe.report;

import dev.ctxprobe.metrics.StepMetrics;
import dev.ctxprobe.results.PasskeyAnswer;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.roofline.StepRoofline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.stream.Collectors;

/**
 * What the report formats show of a step beyond its raw keys, worked out once: the rates with what they divide,
 * the cause in words, the upload time, and the step table text and Markdown share.
 */
public final class StepFacts {
    /** The step table's columns as text and Markdown show them, each rate named by what it divides. */
    private static final List<String> HEADERS = List.of(
            "backend",
            "target",
            "context (server's)",
            "outcome",
            "TTFT ms",
            "e2e ms",
            "prefill tok/s (target / TTFT)",
            "input tok/s (input tokens / duration)",
            "% of roofline",
            "error / cause");

    /** Which columns hold numbers (right-aligned). */
    private static final List<Boolean> NUMERIC = List.of(false, true, true, false, true, true, true, true, true, false);

    /** The pass-key answer's column, before the cause; only where some step of the table has an answer. */
    private static final String ANSWER = "answer";

    /** Got text longer than this is cut in a table cell; the results keep 64 characters of it. */
    private static final int GOT_CHARS = 24;

    private StepFacts() {}

    /** Whether any of {@code steps} was checked for a pass key (docs/results.md#answer). */
    static boolean anyAnswer(List<Scenario> steps) {
        return steps.stream().anyMatch(s -> s.answer() != null);
    }

    /** The step table's headers, with the answer's column where {@code answers}. */
    static List<String> headers(boolean answers) {
        return withAnswer(HEADERS, answers ? ANSWER : null);
    }

    /** Which of {@link #headers} hold numbers. */
    static List<Boolean> numeric(boolean answers) {
        return withAnswer(NUMERIC, answers ? false : null);
    }

    static List<String> cells(Scenario s, boolean answers) {
        StepMetrics m = s.metrics();
        List<String> cells = List.of(
                TerminalText.line(s.backend()),
                target(s.targetLen(), s.concurrency()),
                Cells.tokens(context(s)),
                TerminalText.line(s.outcome().id()),
                m == null ? "" : Cells.oneDecimal(m.ttftMs().mean()),
                m == null ? "" : Cells.oneDecimal(m.e2eMs().mean()),
                Cells.whole(prefillRate(s)),
                m == null ? "" : Cells.whole(m.inputTokenThroughput()),
                Cells.text(StepRoofline.cell(s)),
                TerminalText.line(causeText(s)));
        return withAnswer(cells, answers ? TerminalText.line(answer(s)) : null);
    }

    /**
     * A step's target as every line and table names it: {@code 4,096}, and {@code 4,096 x2} for a probe of the
     * capacity map that sent 2 prompts of 4,096 tokens at once (docs/search.md#the-capacity-map).
     */
    public static String target(long target, int concurrency) {
        return Cells.tokens(target) + (concurrency > 1 ? " x" + concurrency : "");
    }

    // The list with `answer` before its last element (the cause), or as it is when null.
    private static <T> List<T> withAnswer(List<T> row, T answer) {
        if (answer == null) {
            return row;
        }
        List<T> out = new ArrayList<>(row.subList(0, row.size() - 1));
        out.add(answer);
        out.add(row.getLast());
        return List.copyOf(out);
    }

    /**
     * A step's pass-key answer in a few words (docs/results.md#answer): {@code correct}, {@code wrong} with the depth
     * and the start of what came back for the first wrong key, or {@code not checked}; empty for a step not checked
     * at all. Text from the server, to be escaped for where it goes.
     */
    public static String answer(Scenario s) {
        PasskeyAnswer a = s.answer();
        if (a == null) {
            return "";
        }
        if (a.correct()) {
            return "correct";
        }
        if (a.wrong()) {
            return a.keys().stream()
                    .filter(k -> !k.correct())
                    .findFirst()
                    .map(k -> String.format(
                            Locale.ROOT, "wrong (depth %s: \"%s\")", Cells.plainNumber(k.depth()), got(k.got())))
                    .orElse("wrong");
        }
        return "not checked";
    }

    private static String got(String text) {
        String t = text == null ? "" : text.strip();
        return t.length() <= GOT_CHARS ? t : t.substring(0, GOT_CHARS) + "…";
    }

    /**
     * The context the step's server had: what it stated (llama.cpp's {@code n_ctx_slot}, vLLM's {@code
     * max_model_len}, SGLang's {@code context_len}), else the {@code max_model_len} the command was given. A command
     * that does not use the target (a fixed {@code -c}, a server kept by {@code restart: on_failure}, an endpoint
     * ctxprobe did not launch) had another context than target + pad, so the recorded {@code max_model_len} is
     * shown only where nothing better is known, and not at all for an endpoint that stated none
     * (docs/results.md#reading-results).
     */
    static Long context(Scenario s) {
        if (s.server() != null
                && s.server().capacity() != null
                && s.server().capacity().contextTokens() != null) {
            return s.server().capacity().contextTokens();
        }
        boolean launched = s.serverArgs() != null && !s.serverArgs().isBlank();
        return launched ? s.maxModelLen() : null;
    }

    /**
     * Prefill tokens per second: the target over the mean TTFT. The seeds' {@code input_token_throughput} divides
     * by the whole duration instead, which in the P800 seed holds seconds of something else (18,557 tok/s at 64K
     * where the prompt's prefill ran at 167,737).
     */
    public static Double prefillRate(Scenario s) {
        return s.metrics() == null
                ? null
                : rate(s.targetLen(), s.metrics().ttftMs().mean());
    }

    /** Tokens over milliseconds as tokens per second; null when the time is not a positive number. */
    static Double rate(long tokens, double ms) {
        return ms > 0 && Double.isFinite(ms) ? tokens / (ms / 1000) : null;
    }

    /** The mean TTFT of a step that passed, or null: a failed step's numbers do not belong on its curve. */
    static Double passedTtftMs(Scenario s) {
        if (!s.success() || s.metrics() == null) {
            return null;
        }
        double mean = s.metrics().ttftMs().mean();
        return Double.isFinite(mean) ? mean : null;
    }

    /** Why a step failed in words: the outcome column already names the class, so the sentence alone. */
    static String causeText(Scenario s) {
        if (s.success()) {
            return Cells.text(s.error());
        }
        if (s.error() != null && !s.error().isEmpty()) {
            return s.error();
        }
        if (s.failure() != null && s.failure().detail() != null) {
            return s.failure().detail();
        }
        return s.outcome().id();
    }

    /** The mean time the measured requests took to upload their prompt, or null where none was timed. */
    static Double sendMsMean(Scenario s) {
        OptionalDouble mean = s.requests().stream()
                .filter(r -> !r.warmup() && r.sendMs() != null)
                .mapToDouble(Scenario.Request::sendMs)
                .average();
        return mean.isPresent() ? mean.getAsDouble() : null;
    }

    /** How the step's server ended, in words; null when unknown. */
    static String ended(Scenario s) {
        return s.server() == null || s.server().ended() == null
                ? null
                : s.server().ended().describe();
    }

    /** Accelerator memory per device, e.g. {@code 1,200 / 0 MiB}; null when not queried. */
    static String memory(List<Long> mib) {
        if (mib == null || mib.isEmpty()) {
            return null;
        }
        return mib.stream().map(Cells::tokens).collect(Collectors.joining(" / ")) + " MiB";
    }
}
