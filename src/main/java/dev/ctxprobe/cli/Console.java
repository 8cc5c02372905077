package dev.ctxprobe.cli;

import dev.ctxprobe.explore.RunListener;
import dev.ctxprobe.explore.StepPhase;
import dev.ctxprobe.launch.ServerLog;
import dev.ctxprobe.report.FrontierLine;
import dev.ctxprobe.report.StepFacts;
import dev.ctxprobe.report.TerminalText;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.results.ServedCapacity;
import dev.ctxprobe.roofline.StepRoofline;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The run's terminal output: one line per step as it finishes, then a closing table led by the frontier line of
 * each backend. While a step runs there are signs of life: on a terminal its line is redrawn twice a second with
 * the phase (queued, launching, loading, ready, prefill, decoding, stopping), the time in it and the server log's
 * latest line; without a terminal (or under CI) a plain line is printed every 30 s that a phase lasts. With backends
 * explored at once ({@code run --parallel}) each live step has its line, drawn as a block below the finished ones.
 * It prints only; the results are saved whether or not anyone listens.
 *
 * <p>Drawn by hand rather than with a progress library: one line, rewritten with a carriage return and ANSI's
 * erase-to-end-of-line, cut to the terminal's width, is all it takes. JLine would bring a megabyte and native
 * terminal access for that; progressbar (built on JLine) writes carriage-return frames into files and CI logs too,
 * where the plain lines belong.
 */
final class Console implements RunListener, AutoCloseable {
    private volatile Path runDir;
    /** How often a terminal's line is redrawn: the spinner moves each time, so the line changes twice a second. */
    static final long REDRAW_MS = 500;

    /** How often a plain line repeats while one phase lasts. */
    static final long PLAIN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);

    private static final String ERASE_TO_END = "\u001B[K";
    /** ANSI: to the start of the line N lines up ({@code %d}), then erase to the end of the screen. */
    private static final String UP_AND_ERASE = "\u001B[%dF\u001B[J";

    private static final char[] SPINNER = {'|', '/', '-', '\\'};

    private final PrintStream out;
    private final Style style;
    private final LongSupplier clock;
    private final int width;
    private int steps;
    /** The live steps by backend: one at a time, or one per backend explored at once. */
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    /** Lines of the block of live steps drawn below the finished ones (backends at once, on a terminal). */
    private int drawn;

    private Thread ticker;
    private boolean closed;

    /** A phase and when it began, swapped whole so that request threads never wait for the drawing thread. */
    private record PhaseState(StepPhase phase, long sinceNanos, Path log) {}

    /** The step on screen: what explore said last, and when; the rest belongs to the ticker. */
    private static final class Running {
        final int number;
        final String backend;
        final long target;
        final int concurrency;
        final long startedNanos;
        final AtomicReference<PhaseState> state;
        long plainPhaseSince;
        long lastPlainNanos;
        int frame;

        Running(int number, String backend, long target, int concurrency, long now) {
            this.number = number;
            this.backend = backend;
            this.target = target;
            this.concurrency = concurrency;
            this.startedNanos = now;
            this.state = new AtomicReference<>(new PhaseState(null, now, null));
            this.plainPhaseSince = now;
            this.lastPlainNanos = now;
        }
    }

    /**
     * What the console shows and how.
     *
     * @param quiet only the frontier lines ({@code -q})
     * @param verbose each failure's evidence too ({@code -v})
     * @param live lines are drawn and finished in place (a terminal) rather than printed whole (CI logs, files)
     * @param together backends are explored at once, so several steps are live at a time
     */
    record Style(boolean quiet, boolean verbose, boolean live, boolean together) {
        /** For this process's standard output: in place on a terminal, outside CI. */
        static Style of(boolean quiet, boolean verbose, boolean together) {
            return new Style(quiet, verbose, System.console() != null && System.getenv("CI") == null, together);
        }
    }

    /** @param stepsSoFar the steps already in the document (a resumed run counts on from them) */
    Console(PrintStream out, Style style, int stepsSoFar, LongSupplier clock) {
        this.out = out;
        this.style = style;
        this.steps = stepsSoFar;
        this.clock = clock;
        this.width = style.live() ? terminalWidth() : 0;
    }

    /** The run's folder, once the run said which; null before. */
    Path runDir() {
        return runDir;
    }

    @Override
    public void runStarted(String experiment, Path runDir) {
        this.runDir = runDir;
        if (!style.quiet()) {
            out.println("ctxprobe " + dev.ctxprobe.run.Version.of() + ": " + TerminalText.line(experiment) + " -> "
                    + TerminalText.line(runDir.toString()));
            startTicker();
        }
    }

    private synchronized void startTicker() {
        if (ticker != null || closed) {
            return;
        }
        ticker = Thread.ofPlatform().daemon().name("ctxprobe-progress").start(() -> {
            long period = style.live() ? REDRAW_MS : 250;
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(period);
                } catch (InterruptedException e) {
                    return;
                }
                tick();
            }
        });
    }

    @Override
    public synchronized void stepStarting(String backend, long target, int concurrency, long maxModelLen) {
        Running r = new Running(steps + running.size() + 1, backend, target, concurrency, clock.getAsLong());
        running.put(backend, r);
        if (style.quiet()) {
            return;
        }
        if (style.verbose()) {
            out.printf(
                    Locale.ROOT,
                    "[%d] %s %s tokens: starting (max_model_len %,d)%n",
                    steps + 1,
                    backend,
                    StepFacts.target(target, concurrency),
                    maxModelLen);
        }
        if (style.live() && style.together()) {
            drawBlock(Map.of());
        } else if (style.live()) {
            draw(r, null);
        }
    }

    // Called on request threads too, right after a first token: no lock, no I/O, an allocation only on a change.
    @Override
    public void stepPhase(String backend, long target, StepPhase phase, Path log) {
        Running r = running.get(backend);
        if (r == null) {
            return;
        }
        r.state.updateAndGet(old -> {
            if (old.phase() != phase) {
                return new PhaseState(phase, clock.getAsLong(), log != null ? log : old.log());
            }
            return log != null && old.log() == null ? new PhaseState(phase, old.sinceNanos(), log) : old;
        });
    }

    /** Redraws the terminal's line, or prints a plain line when a phase has lasted another 30 s. */
    void tick() {
        if (style.quiet() || running.isEmpty()) {
            return;
        }
        // Read before taking the lock: the logs are files, and the steps' own threads print under the lock.
        Map<Running, String> logLines = new HashMap<>();
        for (Running r : running.values()) {
            Path log = r.state.get().log();
            String line = log == null ? null : ServerLog.latestLine(log).orElse(null);
            if (line != null) {
                logLines.put(r, line);
            }
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            if (style.live() && style.together()) {
                drawBlock(logLines);
                return;
            }
            for (Running r : running.values()) {
                tick(r, logLines.get(r));
            }
        }
    }

    private void tick(Running r, String logLine) {
        PhaseState state = r.state.get();
        if (style.live()) {
            draw(r, logLine);
            return;
        }
        long now = clock.getAsLong();
        if (r.plainPhaseSince != state.sinceNanos()) {
            r.plainPhaseSince = state.sinceNanos();
            r.lastPlainNanos = state.sinceNanos();
        }
        if (state.phase() != null && now - r.lastPlainNanos >= PLAIN_EVERY_NANOS) {
            r.lastPlainNanos = now;
            out.println(head(r.number, r.backend, r.target, r.concurrency)
                    + state.phase().id() + " for " + elapsed(now - state.sinceNanos())
                    + (logLine == null ? "" : ": " + TerminalText.line(logLine)));
            out.flush();
        }
    }

    // The live steps, one line each in the order they started, in place of the block drawn before.
    private void drawBlock(Map<Running, String> logLines) {
        eraseBlock();
        List<Running> shown = running.values().stream()
                .sorted(Comparator.comparingInt(r -> r.number))
                .toList();
        for (Running r : shown) {
            out.println(fit(nextFrame(r, logLines.get(r)), width));
        }
        drawn = shown.size();
        out.flush();
    }

    private void eraseBlock() {
        if (drawn > 0) {
            out.print(String.format(Locale.ROOT, UP_AND_ERASE, drawn));
            drawn = 0;
        }
    }

    private void draw(Running r, String logLine) {
        out.print("\r" + fit(nextFrame(r, logLine), width) + ERASE_TO_END);
        out.flush();
    }

    // The step's progress line now, its spinner one frame on.
    private String nextFrame(Running r, String logLine) {
        PhaseState state = r.state.get();
        long now = clock.getAsLong();
        r.frame++;
        return progressLine(
                r.number,
                r.backend,
                r.target,
                r.concurrency,
                state.phase(),
                now - state.sinceNanos(),
                now - r.startedNanos,
                SPINNER[r.frame % SPINNER.length],
                logLine);
    }

    /**
     * {@code [3] vllm 262,144  loading 1 min 05 s | Loading safetensors checkpoint shards: 45% Completed}; a probe
     * of the capacity map names its requests sent at once: {@code [9] vllm 65,536 x4  decoding 3 s}.
     */
    static String progressLine(
            int n,
            String backend,
            long target,
            int concurrency,
            StepPhase phase,
            long phaseNanos,
            long stepNanos,
            char spinner,
            String logLine) {
        StringBuilder s = new StringBuilder(head(n, backend, target, concurrency));
        s.append(spinner).append(' ');
        if (phase == null) {
            s.append("starting ").append(elapsed(stepNanos));
        } else {
            s.append(phase.id()).append(' ').append(elapsed(phaseNanos));
            if (stepNanos - phaseNanos >= TimeUnit.SECONDS.toNanos(1)) {
                s.append(" (step ").append(elapsed(stepNanos)).append(')');
            }
        }
        if (logLine != null) {
            s.append("  | ").append(TerminalText.line(logLine));
        }
        return s.toString();
    }

    // A single prompt's target as before; N prompts at once as the reports write them, 4,096 x2.
    private static String head(int n, String backend, long target, int concurrency) {
        return String.format(
                Locale.ROOT, "[%d] %-10s %11s  ", n, TerminalText.line(backend), StepFacts.target(target, concurrency));
    }

    /** {@code 42 s}, {@code 3 min 05 s}, {@code 1 h 02 min}. */
    static String elapsed(long nanos) {
        long s = Math.max(0, TimeUnit.NANOSECONDS.toSeconds(nanos));
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d h %02d min", s / 3600, s % 3600 / 60);
    }

    // A line longer than the terminal wraps, and a carriage return then rewrites only its last part.
    static String fit(String line, int width) {
        int max = Math.max(20, width - 1);
        return line.length() <= max ? line : line.substring(0, max - 1) + "…";
    }

    @Override
    public synchronized void stepFinished(Scenario s, ResultDocument doc) {
        // Numbered by the document, so a resumed run and skipped steps count on from where they stand.
        steps = doc.scenarios().size();
        running.remove(s.backend());
        if (style.quiet()) {
            return;
        }
        if (style.live() && style.together()) {
            eraseBlock();
        } else if (style.live()) {
            out.print("\r" + ERASE_TO_END);
        }
        out.println(stepLine(steps, s));
        if (s.server() != null && !s.server().leftoverPids().isEmpty()) {
            out.println("      warning: processes " + s.server().leftoverPids() + " of this server survived KILL;"
                    + " they may hold the port or accelerator memory");
        }
        StepRoofline.physicsWarnings(s).forEach(w -> out.println("      warning: " + w));
        if (style.verbose() && s.failure() != null) {
            s.failure().evidence().forEach(l -> out.println("      | " + TerminalText.line(l)));
        }
        if (style.live() && style.together()) {
            drawBlock(Map.of());
        }
        out.flush();
    }

    @Override
    public void backendFinished(String backend, Frontier frontier, ResultDocument doc) {}

    @Override
    public synchronized void backendWaiting(String backend, String reason) {
        note(backend + " waits: " + reason);
    }

    @Override
    public synchronized void startsFromTwin(String backend, String twin, long target) {
        note(String.format(
                Locale.ROOT,
                "%s starts at %,d, the answer of %s: the plan proves both bound by the same rule at the same length",
                backend,
                target,
                twin));
    }

    @Override
    public synchronized void searchesWithinStated(String backend, ServedCapacity stated, long largestPrompt) {
        String what = stated.contextTokens() != null
                ? String.format(Locale.ROOT, "a context of %,d tokens", stated.contextTokens())
                : String.format(Locale.ROOT, "a limit of %,d prompt tokens", stated.maxPromptTokens());
        note(String.format(
                Locale.ROOT,
                "%s: the endpoint states %s (%s); searching up to %,d",
                backend,
                what,
                String.join(", ", stated.sources()),
                largestPrompt));
    }

    // A line of its own between the steps' lines; a live line being drawn is erased first and redrawn on its tick.
    private void note(String line) {
        if (style.quiet()) {
            return;
        }
        if (style.live()) {
            out.print("\r" + ERASE_TO_END);
        }
        out.println(line);
        out.flush();
    }

    // Target over TTFT, as the reports name it: input tokens over the whole duration would count more than prefill.
    private static String rate(Double tokensPerSecond) {
        return tokensPerSecond == null ? "-" : String.format(Locale.ROOT, "%,.0f", tokensPerSecond);
    }

    static String stepLine(int n, Scenario s) {
        String head = head(n, s.backend(), s.targetLen(), s.concurrency());
        if (s.success() && s.metrics() != null) {
            return head
                    + String.format(
                            Locale.ROOT,
                            "ok    TTFT %s  prefill %s tok/s%s%s%s",
                            duration(s.metrics().ttftMs().mean()),
                            rate(StepFacts.prefillRate(s)),
                            // An unknown floor is said in plan and the reports; the line stays short.
                            s.roofline() == null || s.roofline().percent() == null
                                    ? ""
                                    : "  roofline " + StepRoofline.cell(s),
                            // The pass-key answer (docs/results.md#answer), in the words the reports use.
                            s.answer() == null ? "" : "  answer " + TerminalText.line(StepFacts.answer(s)),
                            s.server() != null && s.server().startupS() != null
                                    ? String.format(
                                            Locale.ROOT,
                                            "  (startup %.1f s)",
                                            s.server().startupS())
                                    : "");
        }
        String error = s.error() == null ? "" : s.error();
        String outcome = s.outcome().id();
        return head + "FAIL  " + TerminalText.line(error.startsWith(outcome) ? error : outcome + ": " + error);
    }

    /** The closing summary: frontier lines first, then a table of every step. */
    void summary(ResultDocument doc, Path runDir) {
        close();
        if (style.quiet()) {
            frontierLines(doc);
            return;
        }
        out.println();
        frontierLines(doc);
        out.println();
        out.printf(
                Locale.ROOT,
                "%-10s %11s %13s  %-18s %10s %14s%n",
                "backend",
                "target",
                "max_model_len",
                "outcome",
                "TTFT",
                "prefill tok/s");
        for (Scenario s : doc.scenarios()) {
            boolean ok = s.success() && s.metrics() != null;
            out.printf(
                    Locale.ROOT,
                    "%-10s %11s %,13d  %-18s %10s %14s%n",
                    s.backend(),
                    StepFacts.target(s.targetLen(), s.concurrency()),
                    s.maxModelLen(),
                    s.outcome().id(),
                    ok ? duration(s.metrics().ttftMs().mean()) : "-",
                    ok ? rate(StepFacts.prefillRate(s)) : "-");
        }
        out.println();
        out.println("results: " + runDir.resolve("results.json"));
    }

    /** Stops the progress display; a line drawn in place is cleared. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = ticker;
            if (style.live() && style.together() && !style.quiet()) {
                eraseBlock();
                out.flush();
            } else if (style.live() && !running.isEmpty() && !style.quiet()) {
                out.print("\r" + ERASE_TO_END);
                out.flush();
            }
            running.clear();
        }
        if (t != null) {
            t.interrupt();
        }
    }

    private void frontierLines(ResultDocument doc) {
        int width =
                doc.frontier().keySet().stream().mapToInt(String::length).max().orElse(6);
        doc.frontier().forEach((backend, f) -> {
            out.println(FrontierLine.line(backend, width, f, doc.scenariosOf(backend)));
            FrontierLine.surface(width, f, doc.scenariosOf(backend)).forEach(out::println);
        });
    }

    static String duration(double ms) {
        return ms >= 1_000
                ? String.format(Locale.ROOT, "%.2f s", ms / 1000)
                : String.format(Locale.ROOT, "%.1f ms", ms);
    }

    /** The terminal's columns: {@code COLUMNS} when exported, else what {@code stty} says, else 80. */
    private static int terminalWidth() {
        String columns = System.getenv("COLUMNS");
        if (columns != null && columns.matches("\\d{2,4}")) {
            return Integer.parseInt(columns);
        }
        try {
            Process stty = new ProcessBuilder("stty", "size")
                    .redirectInput(
                            ProcessBuilder.Redirect.from(Path.of("/dev/tty").toFile()))
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            String said = new String(stty.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
            if (stty.waitFor(2, TimeUnit.SECONDS) && said.matches("\\d+ \\d+")) {
                int cols = Integer.parseInt(said.substring(said.indexOf(' ') + 1));
                if (cols >= 20) {
                    return cols;
                }
            }
        } catch (IOException e) {
            // No stty or no terminal to ask: the default below.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 80;
    }
}
