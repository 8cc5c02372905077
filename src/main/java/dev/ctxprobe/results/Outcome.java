package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Optional;

/**
 * How a step ended: it passed, it was never launched (skipped), or it failed with one failure class. Written as one
 * word, {@code outcome} in results: {@code ok}, {@code skipped} or the class id. A failure read from a file that
 * names no class (the seeds carry only an error sentence) is {@code failed}. The search's policy is asked of the
 * outcome, never of its text.
 *
 * @param failureClass the class of a failure; null for ok, skipped, and a failure whose file names none
 */
public record Outcome(Kind kind, FailureClass failureClass) {

    /** What kind of ending. */
    public enum Kind {
        OK,
        SKIPPED,
        FAILED
    }

    public static final Outcome OK = new Outcome(Kind.OK, null);
    public static final Outcome SKIPPED = new Outcome(Kind.SKIPPED, null);
    /** A failure whose file says nothing but that it failed. */
    public static final Outcome UNCLASSIFIED = new Outcome(Kind.FAILED, null);

    public Outcome {
        if (kind == null || (kind != Kind.FAILED && failureClass != null)) {
            throw new IllegalArgumentException("an outcome is ok, skipped, or a failure with at most one class");
        }
    }

    /** A failure of that class. */
    public static Outcome failed(FailureClass failureClass) {
        return new Outcome(Kind.FAILED, failureClass);
    }

    /** The outcome an id names: {@code ok}, {@code skipped}, {@code failed} or a failure class id. */
    @JsonCreator
    public static Outcome of(String id) {
        return switch (id) {
            case "ok" -> OK;
            case "skipped" -> SKIPPED;
            case "failed" -> UNCLASSIFIED;
            default -> failed(FailureClass.fromId(id));
        };
    }

    /** The word written in results. */
    @JsonValue
    public String id() {
        return switch (kind) {
            case OK -> "ok";
            case SKIPPED -> "skipped";
            case FAILED -> failureClass == null ? "failed" : failureClass.id();
        };
    }

    public boolean passed() {
        return kind == Kind.OK;
    }

    /** False for a step that was only listed: its backend had stopped before it. */
    public boolean launched() {
        return kind != Kind.SKIPPED;
    }

    public boolean failed() {
        return kind == Kind.FAILED;
    }

    public Optional<FailureClass> failure() {
        return Optional.ofNullable(failureClass);
    }

    /** True for the user's Ctrl-C: the step runs again on resume. */
    public boolean interrupted() {
        return failureClass == FailureClass.INTERRUPTED;
    }

    /**
     * A failure that answers "too long?" for its target and so steers a search. A failure without a class (the
     * seeds) counts as one: its file says only that the length failed.
     */
    public boolean boundsLength() {
        return failed() && (failureClass == null || failureClass.saysSomethingAboutLength());
    }

    /** A failure that says nothing about length (busy port, ctxprobe's bug, Ctrl-C): it ends a backend's search. */
    public boolean endsSearch() {
        return failed() && !boundsLength();
    }

    /** A kept server that gave this answer may still be busy with the abandoned prompt: replace it. */
    public boolean replacesKeptServer() {
        return failureClass != null && failureClass.replacesKeptServer();
    }

    /** A server refused to start for its length: one launched for a shorter length may still start. */
    public boolean worthRetryBelow() {
        return failureClass != null && failureClass.refusedForLength();
    }

    @Override
    public String toString() {
        return id();
    }
}
