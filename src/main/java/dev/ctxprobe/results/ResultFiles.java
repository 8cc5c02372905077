package dev.ctxprobe.results;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes {@code results.json} atomically (temporary file in the same folder, flushed to disk, renamed) so a run
 * interrupted at any moment leaves a valid file, and reads it back, for {@code --resume} and for reports.
 */
public final class ResultFiles {
    /** The results file's name inside a run folder. */
    public static final String NAME = "results.json";

    /**
     * The largest results file read (docs/results.md#how-large-a-results-file-may-be): a run of a thousand steps writes a few MiB; a larger
     * file is refused by its size before it is read, so a report never holds it in memory.
     */
    public static final long MAX_BYTES = 64L << 20;

    /** The longest single string a results file may hold, in characters: the parser's own limit refuses more. */
    public static final int MAX_STRING_CHARS = 8 << 20;

    static final JsonMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /** results/&lt;experiment&gt;/&lt;run_id&gt;/results.json lies three levels below the results folder. */
    private static final int RUN_FOLDER_DEPTH = 3;

    /** The problems of one file a message lists; the exception keeps them all. */
    private static final int MAX_SHOWN = 20;

    private static final String TMP_PREFIX = ".results-";
    private static final String TMP_SUFFIX = ".json.tmp";
    private static final java.util.Random RANDOM = new java.security.SecureRandom();

    private ResultFiles() {}

    /**
     * Replaces {@code file} with {@code doc} in one rename. Temporary files that an earlier write left (a process
     * killed mid-write) are removed first; one run writes its folder at a time.
     *
     * @throws IOException when any part cannot be written (a full disk): {@code file} then still holds what it held
     */
    public static void write(Path file, ResultDocument doc) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        removeStale(dir);
        // Not Files.createTempFile: its owner-only mode would stay on results.json after the rename, while the
        // folder's other files (the logs, experiment.yaml, report.html) get the user's umask (docs/results.md).
        Path tmp = dir.resolve(TMP_PREFIX + java.util.HexFormat.of().toHexDigits(RANDOM.nextLong()) + TMP_SUFFIX);
        Files.createFile(tmp);
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
        } catch (JacksonException e) {
            // Jackson 3 reports the stream's IOException unchecked; it is the same failure to write.
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getOriginalMessage(), e);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static void removeStale(Path dir) throws IOException {
        try (java.nio.file.DirectoryStream<Path> stale = Files.newDirectoryStream(dir, TMP_PREFIX + "*" + TMP_SUFFIX)) {
            for (Path p : stale) {
                Files.deleteIfExists(p);
            }
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

    /**
     * Reads a results file, ctxprobe's or a seed's (the P800 seed's {@code max_context_len}, no outcome or
     * failure keys, stats without count), checking it first: what resume and report read is never guessed.
     *
     * @throws ResultFileException listing every problem as {@code file: path: what is wrong}
     */
    public static ResultDocument read(Path file) throws ResultFileException {
        return ResultReader.read(file);
    }

    /**
     * The results files an input stands for: the file itself, a run folder's {@code results.json}, or those of
     * the run folders below a folder ({@code results/<experiment>/<run_id>/}), sorted.
     *
     * @throws ResultFileException when the input does not exist or holds no results file
     */
    public static List<Path> find(Path input) throws ResultFileException {
        if (!Files.exists(input)) {
            throw new ResultFileException(List.of(input + ": no such file or folder"));
        }
        if (!Files.isDirectory(input)) {
            return List.of(input);
        }
        Path direct = input.resolve(NAME);
        if (Files.isRegularFile(direct)) {
            return List.of(direct);
        }
        List<Path> files;
        try (Stream<Path> found = Files.walk(input, RUN_FOLDER_DEPTH)) {
            files = found.filter(p -> p.getFileName().toString().equals(NAME))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            throw new ResultFileException(List.of(input + ": cannot list the folder: " + e.getMessage()));
        }
        if (files.isEmpty()) {
            throw new ResultFileException(
                    List.of(input + ": no " + NAME + " in this folder or in run folders below it"));
        }
        return files;
    }

    /**
     * A results file that cannot be used; an {@link IOException}, as reading it is part of the I/O a caller does
     * with files, and a report that cannot read its run's results is one it cannot write.
     */
    public static final class ResultFileException extends IOException {
        private static final long serialVersionUID = 1L;

        private final List<String> problems;

        /** @param problems one line each, {@code file: path: what is wrong} */
        public ResultFileException(List<String> problems) {
            super(message(problems));
            this.problems = List.copyOf(problems);
        }

        /** Every problem found, one line each. */
        public List<String> problems() {
            return problems;
        }

        // A hand-edited file may be wrong everywhere: the first problems say enough to start fixing it.
        private static String message(List<String> problems) {
            int shown = Math.min(problems.size(), MAX_SHOWN);
            String lines = String.join("\n", problems.subList(0, shown));
            return problems.size() > shown ? lines + "\n(and " + (problems.size() - shown) + " more)" : lines;
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
