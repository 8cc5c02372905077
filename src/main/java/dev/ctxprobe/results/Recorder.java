package dev.ctxprobe.results;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * A run's result document and its file: every change is saved at once (atomically), so a finished step is on disk
 * before the next begins, whoever watches the run. Safe to use from several threads (backends explored in
 * parallel): changes are applied one at a time to the latest document.
 */
public final class Recorder {
    private final Path file;
    private ResultDocument document;

    /** Saves {@code start} to {@code file} right away: a run that dies in its first step still leaves a valid file. */
    public Recorder(Path file, ResultDocument start) {
        this.file = file;
        this.document = start;
        save(start);
    }

    /** Applies {@code change} to the latest document, saves it and returns it. */
    public synchronized ResultDocument update(UnaryOperator<ResultDocument> change) {
        ResultDocument next = change.apply(document);
        save(next);
        document = next;
        return next;
    }

    public synchronized ResultDocument document() {
        return document;
    }

    public Path file() {
        return file;
    }

    private void save(ResultDocument doc) {
        try {
            ResultFiles.write(file, doc);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "the results could not be saved to " + file + " (" + e.getMessage()
                            + "); the file still holds the last step saved",
                    e);
        }
    }
}
