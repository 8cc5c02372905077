package dev.ctxprobe.results;

import dev.ctxprobe.experiment.FileReason;
import dev.ctxprobe.secrets.Redactor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;

/**
 * A run's result document and its file: every change is saved at once (atomically), so a finished step is on disk
 * before the next begins, whoever watches the run. Safe to use from several threads (backends explored in
 * parallel): changes are applied one at a time to the latest document. Secret values are masked in every document
 * it holds, so neither the file, the report nor a listener ever sees one.
 */
public final class Recorder {
    private final Path file;
    private final Redactor redactor;
    private ResultDocument document;

    /** Saves {@code start} to {@code file} right away: a run that dies in its first step still leaves a valid file. */
    public Recorder(Path file, ResultDocument start) {
        this(file, start, Redactor.NONE);
    }

    /** As {@link #Recorder(Path, ResultDocument)}, masking what {@code redactor} finds. */
    public Recorder(Path file, ResultDocument start, Redactor redactor) {
        this.file = file;
        this.redactor = redactor;
        this.document = masked(start);
        save(document);
    }

    /** Applies {@code change} to the latest document, saves it and returns it. */
    public synchronized ResultDocument update(UnaryOperator<ResultDocument> change) {
        ResultDocument next = masked(change.apply(document));
        save(next);
        document = next;
        return next;
    }

    // Every text of the document, whatever field holds it (evidence, server_args, config, an error sentence).
    private ResultDocument masked(ResultDocument doc) {
        if (redactor.isEmpty()) {
            return doc;
        }
        try {
            if (!redactor.finds(ResultFiles.MAPPER.writeValueAsString(doc))) {
                return doc;
            }
            JsonNode tree = ResultFiles.MAPPER.valueToTree(doc);
            return ResultFiles.MAPPER.treeToValue(mask(tree), ResultDocument.class);
        } catch (JacksonException e) {
            throw new IllegalStateException("the results cannot be masked: " + e.getOriginalMessage(), e);
        }
    }

    private JsonNode mask(JsonNode node) {
        if (node.isString()) {
            String text = node.asString();
            String masked = redactor.mask(text);
            return masked.equals(text) ? node : StringNode.valueOf(masked);
        }
        if (node instanceof ObjectNode o) {
            for (String name : o.propertyNames()) {
                o.set(name, mask(o.get(name)));
            }
        } else if (node instanceof tools.jackson.databind.node.ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                a.set(i, mask(a.get(i)));
            }
        }
        return node;
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
            throw new NotSaved(
                    "the results could not be saved to " + file + " (" + FileReason.of(e)
                            + "); the file still holds the last step saved",
                    e);
        }
    }

    /** The results file could not be written (a full disk); the message says which file and why, in one sentence. */
    public static final class NotSaved extends UncheckedIOException {
        private static final long serialVersionUID = 1L;

        NotSaved(String message, IOException cause) {
            super(message, cause);
        }
    }
}
