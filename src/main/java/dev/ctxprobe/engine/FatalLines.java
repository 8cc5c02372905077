package dev.ctxprobe.engine;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads a starting server's log line by line and says which line is fatal: one its profile names ({@link
 * EngineProfile#isFatal}) or, for a Python engine, the last line of a traceback (the exception's type and message,
 * after the frames). A warning that only mentions an error (a failed optional import, a socket retry) is neither:
 * it names no profile text, and no traceback precedes it. docs/failures.md, "A fatal line is a verdict".
 */
public final class FatalLines {
    private static final Pattern TRACEBACK = LogText.pattern("Traceback \\(most recent call last\\)");
    // What engines put before a line of a worker's output: vLLM's "(EngineCore_DP0 pid=9) ", SGLang's
    // "[2026-07-08 14:35:31 TP3] ", torchrun's "[rank0]: ".
    private static final Pattern PREFIX = Pattern.compile("^(?:\\([^()]*pid=\\d+\\) ?|\\[[^\\]]*\\]:? ?)*");
    // The line that ends a traceback: an exception type, qualified or not, then its message.
    private static final Pattern EXCEPTION =
            Pattern.compile("^(?:[A-Za-z_]\\w*\\.)*\\w*(?:Error|Exception|Exit|Interrupt)(?::|$)");
    // Lines inside a traceback: frames, code, carets, the links between chained exceptions.
    private static final Pattern INSIDE =
            Pattern.compile("^(?:\\s|File \"|During handling|The above exception|\\^|~|$)");

    private final EngineProfile profile;
    private boolean inTraceback;

    public FatalLines(EngineProfile profile) {
        this.profile = profile;
    }

    /** The next line of the log; the line itself when it is fatal. */
    public Optional<String> next(String line) {
        String clean = LogText.clean(line);
        if (profile.isFatal(clean)) {
            inTraceback = false;
            return Optional.of(clean.strip());
        }
        if (!profile.tracebacks()) {
            return Optional.empty();
        }
        if (TRACEBACK.matcher(clean).find()) {
            inTraceback = true;
            return Optional.empty();
        }
        if (!inTraceback) {
            return Optional.empty();
        }
        String message = PREFIX.matcher(clean).replaceFirst("");
        if (INSIDE.matcher(message).find()) {
            return Optional.empty();
        }
        inTraceback = false;
        return EXCEPTION.matcher(message).find() ? Optional.of(clean.strip()) : Optional.empty();
    }
}
