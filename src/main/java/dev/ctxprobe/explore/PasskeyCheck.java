package dev.ctxprobe.explore;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.PasskeyPrompt;
import dev.ctxprobe.client.RequestObserver;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.ServerTokenizer;
import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.experiment.Check;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.results.PasskeyAnswer;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Scenario;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * The pass-key check of a backend's steps (docs/search.md#the-frontier-of-right-answers). Each measured request of a
 * step carries a key of its own, and the step's answer says which came back. A control at a short length on the same
 * server tells a model that cannot do the task from one that loses the key at length: a model that misses it there
 * makes every step "not checked", never "wrong".
 *
 * <p>The control runs where it costs least: only when a step came back with no key right and the backend has no
 * verdict yet (a key answered right anywhere is a passed control), and after that step's measured requests, on its
 * warm server, so that the step's first request keeps the cold start it has without the check. The verdicts live in
 * the steps' answers, so a resumed run reads them back instead of asking again.
 *
 * <p>Every measured key lies at {@link Check#STEP_DEPTH}; a step at its backend's frontier so far ({@link
 * PasskeyFrontier}) then asks the other {@code check.depths} in requests of its own. The next step's needles are
 * tokenized on the warm server of the step before, so that a fresh server is asked nothing.
 */
final class PasskeyCheck {

    /** How a failed control's reason starts; a resumed run knows the verdict by it. */
    static final String CONTROL_FAILED = "the model does not retrieve a pass key even at ";

    // Each question to /tokenize; a server that does not answer in this time does not tokenize.
    private static final Duration TOKENIZE_TIMEOUT = Duration.ofSeconds(30);

    /** Why each backend whose control was answered wrong is not checked; the verdict holds for the whole run. */
    private final Map<String, String> failedControls = new ConcurrentHashMap<>();
    /** The backends whose control came back right, or that answered some key right. */
    private final Set<String> passedControls = ConcurrentHashMap.newKeySet();
    /** Each backend's shared prompt pieces: its model's tokenizer is the same on every server it launches. */
    private final Map<String, PasskeyPrompt.Pieces> pieces = new ConcurrentHashMap<>();
    /** Each backend's needles for its next step, tokenized on the warm server of its last one. */
    private final Map<String, List<PasskeyPrompt.Tokenized>> ahead = new ConcurrentHashMap<>();
    /** Which steps ask the key at {@code check.depths}. */
    private final PasskeyFrontier frontier;

    /** A check whose backends start with no verdict and nothing served: a new run. */
    PasskeyCheck() {
        this(new PasskeyFrontier());
    }

    private PasskeyCheck(PasskeyFrontier frontier) {
        this.frontier = frontier;
    }

    /**
     * A check that knows the verdicts the recorded {@code steps} hold and what they served: a resumed run does not
     * ask again.
     */
    static PasskeyCheck resumed(List<Scenario> steps) {
        PasskeyCheck check = new PasskeyCheck(PasskeyFrontier.resumed(steps));
        for (Scenario s : steps) {
            PasskeyAnswer a = s.answer();
            if (a == null) {
                continue;
            }
            if (a.correct() || a.wrong()) {
                check.passedControls.add(s.backend());
            } else if (a.reason() != null && a.reason().startsWith(CONTROL_FAILED)) {
                check.failedControls.putIfAbsent(s.backend(), a.reason());
            }
        }
        return check;
    }

    /**
     * A step's check, prepared before its requests are sent.
     *
     * @param prompt the measured requests' prompts; null when the step is not checked
     * @param notChecked why the step is not checked; null when it is
     * @param preparedNanos how long the step waited for its preparation (tokenizing) beyond the client's one-time
     *     warm-up
     * @param control how to ask the control on this step's server, should its answer need one
     */
    record Prepared(PasskeyPrompt prompt, String notChecked, long preparedNanos, Control control) {}

    /**
     * What the control and the depths of a step need: its backend, its server, its tokenizer and how the step's
     * requests were sent.
     */
    record Control(
            Backend backend, ServerClient client, ServerTokenizer tokenizer, LoadPlan plain, Duration requestTimeout) {}

    /**
     * A step's answer and the time the check added to it.
     *
     * @param ms tokenizing before the step, and the control after it when one ran; the depths' own time is in the
     *     answer ({@link PasskeyAnswer#depthsMs()})
     */
    record Judged(PasskeyAnswer answer, double ms) {}

    /** Prepares the step of {@code backend} at {@code target} on a ready server: the keys of its measured requests. */
    Prepared prepare(
            Backend backend, EngineProfile profile, ServerClient client, LoadPlan plain, Duration requestTimeout)
            throws InterruptedException {
        ServerTokenizer tokenizer = new ServerTokenizer(
                plain.baseUrl(), plain.model(), plain.apiKey(), profile.tokenizer(), TOKENIZE_TIMEOUT);
        Control control = new Control(backend, client, tokenizer, plain, requestTimeout);
        String failed = failedControls.get(backend.name());
        if (failed != null) {
            ServerTokenizer.warmUp();
            return new Prepared(null, failed, 0, control);
        }
        PasskeyPrompt.Pieces known = pieces.get(backend.name());
        List<PasskeyPrompt.Tokenized> mine = ahead.getOrDefault(backend.name(), List.of());
        long nonce = System.nanoTime();
        FutureTask<PasskeyPrompt> calls = new FutureTask<>(() -> PasskeyPrompt.prepare(
                tokenizer, known, mine, plain.targetLen(), plain.numPrompts(), new double[] {Check.STEP_DEPTH}, nonce));
        // The calls go out while the client's one-time warm-up runs (docs/search.md#the-frontier-of-right-answers):
        // every run waits for it before its first request, check or not, so the check adds only what outlasts it.
        Thread.ofVirtual().name("ctxprobe-tokenize").start(calls);
        ServerTokenizer.warmUp();
        long start = System.nanoTime();
        try {
            PasskeyPrompt prompt = calls.get();
            pieces.put(backend.name(), prompt.pieces());
            ahead.remove(backend.name());
            if (prompt.fixedTokens() > plain.targetLen()) {
                return new Prepared(
                        null,
                        String.format(
                                Locale.ROOT,
                                "a prompt of %,d tokens cannot hold the pass-key prompt's %,d fixed tokens",
                                plain.targetLen(),
                                prompt.fixedTokens()),
                        System.nanoTime() - start,
                        control);
            }
            return new Prepared(prompt, null, System.nanoTime() - start, control);
        } catch (ExecutionException e) {
            String why = e.getCause() instanceof IOException io ? io.getMessage() : String.valueOf(e.getCause());
            return new Prepared(null, "the server did not tokenize: " + why, System.nanoTime() - start, control);
        } catch (InterruptedException e) {
            calls.cancel(true);
            throw e;
        }
    }

    /**
     * The answer of a step's measured requests, judged by the key each carried; when no key came back right and the
     * backend has no verdict yet, the control first, on the step's server that is still up. A step at its backend's
     * frontier so far then asks the key at {@code check.depths} on that server too.
     *
     * @param point the served step
     */
    Judged judge(Prepared prepared, Point point, List<RequestRecord> measured) throws InterruptedException {
        boolean atFrontier = frontier.served(point);
        PasskeyPrompt prompt = prepared.prompt();
        if (prompt == null) {
            return new Judged(PasskeyAnswer.notChecked(prepared.notChecked()), prepared.preparedNanos() / 1e6);
        }
        List<PasskeyAnswer.Key> keys = new ArrayList<>();
        for (RequestRecord r : measured) {
            if (r.index() >= prompt.count() || !r.ok()) {
                continue;
            }
            PasskeyPrompt.Needle n = prompt.needle(r.index());
            keys.add(new PasskeyAnswer.Key(
                    r.index(), n.depth(), n.key(), r.textHead(), n.key().equals(PasskeyPrompt.answered(r.textHead()))));
        }
        if (keys.isEmpty()) {
            return new Judged(
                    PasskeyAnswer.notChecked("no measured request was answered"), prepared.preparedNanos() / 1e6);
        }
        String backend = prepared.control().backend().name();
        PasskeyAnswer answer = PasskeyAnswer.of(keys);
        long controlNanos = 0;
        if (keys.stream().anyMatch(PasskeyAnswer.Key::correct)) {
            // A key read back at this length is more than the control would show.
            passedControls.add(backend);
        } else if (!passedControls.contains(backend)) {
            long start = System.nanoTime();
            String reason = control(prepared);
            controlNanos = System.nanoTime() - start;
            if (reason != null) {
                return new Judged(PasskeyAnswer.notChecked(reason), (prepared.preparedNanos() + controlNanos) / 1e6);
            }
        }
        long aheadNanos = tokenizeAhead(prepared);
        double ms = (prepared.preparedNanos() + controlNanos + aheadNanos) / 1e6;
        return new Judged(atFrontier ? atDepths(prepared, answer) : answer, ms);
    }

    /**
     * Tokenizes the next step's needles on this step's server, warm after its requests: a call to a server just
     * started is cold on both sides, and the next step then asks none (docs/search.md#the-frontier-of-right-answers).
     * A server that does not answer leaves the next step to ask itself.
     *
     * @return the time it took
     */
    private long tokenizeAhead(Prepared prepared) {
        long start = System.nanoTime();
        Control c = prepared.control();
        try {
            ahead.put(
                    c.backend().name(),
                    PasskeyPrompt.tokenize(c.tokenizer(), c.plain().numPrompts(), System.nanoTime()));
        } catch (IOException e) {
            ahead.remove(c.backend().name());
        }
        return System.nanoTime() - start;
    }

    /**
     * {@code answer} with the key at each of {@code check.depths}: the step's own depth read from its measured
     * requests, every other one asked in a request of its own, one at a time as the step's prompts fit its server.
     */
    private PasskeyAnswer atDepths(Prepared prepared, PasskeyAnswer answer) throws InterruptedException {
        long start = System.nanoTime();
        Control c = prepared.control();
        LoadPlan plain = c.plain();
        double[] asked = PasskeyFrontier.asked(c.backend().check().depths());
        Map<Double, PasskeyAnswer.Depth> found = new HashMap<>();
        if (asked.length > 0) {
            try {
                PasskeyPrompt prompt = PasskeyPrompt.prepare(
                        c.tokenizer(),
                        prepared.prompt().pieces(),
                        plain.targetLen(),
                        asked.length,
                        asked,
                        System.nanoTime());
                LoadResult result = c.client().send(depthPlan(c, prompt), RequestObserver.NONE);
                for (RequestRecord r : result.measured()) {
                    PasskeyPrompt.Needle n = prompt.needle(r.index());
                    found.put(
                            n.depth(),
                            r.ok()
                                    ? PasskeyAnswer.Depth.answered(
                                            n.depth(),
                                            n.key(),
                                            r.textHead(),
                                            n.key().equals(PasskeyPrompt.answered(r.textHead())),
                                            null)
                                    : PasskeyAnswer.Depth.notChecked(
                                            n.depth(),
                                            "its request was not served ("
                                                    + r.outcome().name().toLowerCase(Locale.ROOT) + " "
                                                    + r.errorText() + ")"));
                }
            } catch (IOException e) {
                for (double d : asked) {
                    found.put(d, PasskeyAnswer.Depth.notChecked(d, "the server did not tokenize: " + e.getMessage()));
                }
            }
        }
        List<PasskeyAnswer.Depth> depths = new ArrayList<>();
        for (double d : c.backend().check().depths()) {
            if (d == Check.STEP_DEPTH) {
                depths.add(fromMeasured(answer));
            } else {
                depths.add(found.getOrDefault(d, PasskeyAnswer.Depth.notChecked(d, "its request got no answer")));
            }
        }
        return answer.withDepths(depths, (System.nanoTime() - start) / 1e6);
    }

    // The step's measured keys, all at its depth: the first wrong one if any, else the first.
    private static PasskeyAnswer.Depth fromMeasured(PasskeyAnswer answer) {
        PasskeyAnswer.Key k = answer.keys().stream()
                .filter(key -> !key.correct())
                .findFirst()
                .orElse(answer.keys().getFirst());
        return PasskeyAnswer.Depth.answered(k.depth(), k.expected(), k.got(), k.correct(), k.request());
    }

    // The depths' requests go as the step's measured ones did, one at a time and without warm-up: the step's
    // target is all its server was shown to hold for a single prompt.
    private static LoadPlan depthPlan(Control c, PasskeyPrompt prompt) {
        LoadPlan plain = c.plain();
        return new LoadPlan(
                plain.baseUrl(),
                plain.model(),
                plain.targetLen(),
                plain.outputLen(),
                prompt.count(),
                1,
                Double.POSITIVE_INFINITY,
                0,
                plain.range(),
                c.requestTimeout(),
                plain.apiKey(),
                plain.limits(),
                prompt);
    }

    /** Null when the backend's control passed; else why its steps are not checked. */
    private String control(Prepared prepared) throws InterruptedException {
        Control c = prepared.control();
        LoadPlan plain = c.plain();
        long length = Math.min(c.backend().check().controlLen(), plain.targetLen());
        // The easiest place, just after the opening: a model that misses the key there cannot do the task.
        PasskeyPrompt prompt = prepared.prompt().control(length);
        if (prompt.fixedTokens() > length) {
            return String.format(
                    Locale.ROOT,
                    "a control of %,d tokens cannot hold the pass-key prompt's %,d fixed tokens: raise"
                            + " check.control_len",
                    length,
                    prompt.fixedTokens());
        }
        LoadPlan control = new LoadPlan(
                plain.baseUrl(),
                plain.model(),
                length,
                Check.MIN_OUTPUT_LEN,
                1,
                1,
                Double.POSITIVE_INFINITY,
                0,
                plain.range(),
                c.requestTimeout(),
                plain.apiKey(),
                plain.limits(),
                prompt);
        LoadResult result = c.client().send(control, RequestObserver.NONE);
        RequestRecord r = result.measured().isEmpty() ? null : result.measured().getFirst();
        if (r == null || !r.ok()) {
            // Not a verdict on the model: the next step that needs one asks again.
            return String.format(
                    Locale.ROOT,
                    "the control at %,d tokens was not served (%s)",
                    length,
                    r == null ? "no answer" : r.outcome().name().toLowerCase(Locale.ROOT) + " " + r.errorText());
        }
        String key = prompt.needle(0).key();
        if (!key.equals(PasskeyPrompt.answered(r.textHead()))) {
            String why = String.format(
                    Locale.ROOT,
                    CONTROL_FAILED + "%,d tokens (asked for %s, it answered \"%s\")",
                    length,
                    key,
                    r.textHead().strip());
            failedControls.put(c.backend().name(), why);
            return why;
        }
        passedControls.add(c.backend().name());
        return null;
    }
}
