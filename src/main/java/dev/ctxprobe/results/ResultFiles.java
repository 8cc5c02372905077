package dev.ctxprobe.results;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes {@code results.json} atomically (temporary file in the same folder, flushed to disk, renamed) so a run
 * interrupted at any moment leaves a valid file, and reads it back for {@code --resume}.
 */
public final class ResultFiles {
    /** The results file's name inside a run folder. */
    public static final String NAME = "results.json";

    static final JsonMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private ResultFiles() {}

    /** Replaces {@code file} with {@code doc} in one rename. */
    public static void write(Path file, ResultDocument doc) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".results-", ".json.tmp");
        try {
            // A FileOutputStream, not a FileChannel: a channel closes itself when the writing thread is
            // interrupted, and the partial results of an interrupted run are written exactly then.
            try (FileOutputStream fos = new FileOutputStream(tmp.toFile())) {
                MAPPER.writeValue(new NonClosing(fos), doc);
                fos.write('\n');
                fos.flush();
                fos.getFD().sync();
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            syncFolder(dir);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    // The rename lives in the folder: without this a power loss right after a step could still lose it.
    private static void syncFolder(Path dir) {
        try (java.nio.channels.FileChannel ch =
                java.nio.channels.FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException notSupported) {
            // Some file systems cannot sync a folder; the file itself is on disk, which is what matters most.
        }
    }

    /** Reads a results file written by ctxprobe; a truncated or hand-broken file gives a message naming the spot. */
    public static ResultDocument read(Path file) throws ResultFileException {
        try {
            ResultDocument doc = MAPPER.readValue(file.toFile(), ResultDocument.class);
            if (doc == null || doc.metadata() == null || doc.scenarios() == null) {
                throw new ResultFileException(
                        file + " is not a ctxprobe results file: it lacks 'metadata' or 'scenarios'");
            }
            return doc;
        } catch (JacksonException e) {
            String at = e.getLocation() == null
                    ? ""
                    : " at line " + e.getLocation().getLineNr() + ", column "
                            + e.getLocation().getColumnNr();
            throw new ResultFileException(file + " cannot be read" + at + ": " + plain(e)
                    + " (the file is truncated or was edited by hand; restore it or start a new run)");
        } catch (NullPointerException | IllegalArgumentException e) {
            throw new ResultFileException(file + " is not a valid ctxprobe results file: " + e.getMessage());
        } catch (RuntimeException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                throw new ResultFileException(file + " does not exist");
            }
            throw e;
        }
    }

    // Jackson's binding messages name Java types ("Cannot deserialize value of type `java.lang.Long`"): say which
    // value is wrong instead.
    private static String plain(JacksonException e) {
        if (e instanceof tools.jackson.databind.DatabindException) {
            String path = e.getPath().stream()
                    .map(r -> r.getPropertyName() != null ? "." + r.getPropertyName() : "[" + r.getIndex() + "]")
                    .collect(java.util.stream.Collectors.joining())
                    .replaceFirst("^\\.", "");
            return "the value of '" + path + "' is not of the kind ctxprobe writes there";
        }
        String first = e.getOriginalMessage().lines().findFirst().orElse("");
        int type = first.indexOf(" `");
        return type > 0 ? first.substring(0, type) : first;
    }

    /** A results file that cannot be used. */
    public static final class ResultFileException extends Exception {
        private static final long serialVersionUID = 1L;

        public ResultFileException(String message) {
            super(message);
        }
    }

    // Jackson closes the stream it writes to; the channel must stay open until it is forced to disk.
    private static final class NonClosing extends java.io.FilterOutputStream {
        NonClosing(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }
}
