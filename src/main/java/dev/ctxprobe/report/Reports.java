package dev.ctxprobe.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/** The report API: read results files or run folders and render them in a {@link Format}. */
public final class Reports {

    /** The file {@link #writeHtml} writes into a run folder. */
    public static final String HTML_FILE = "report.html";

    private Reports() {}

    /**
     * Reads results files or run folders, in order.
     *
     * @throws ReportInputException naming the input and the problem (missing, unreadable, not JSON with
     *     line and column, not a results file)
     * @throws IllegalArgumentException when {@code inputs} is empty
     */
    public static List<ResultSet> read(List<Path> inputs) {
        return new ResultReader().read(inputs);
    }

    /** Reads the inputs and renders them as one document. */
    public static String render(List<Path> inputs, Format format) {
        return renderSets(read(inputs), format);
    }

    /** Renders results already read. */
    public static String renderSets(List<ResultSet> sets, Format format) {
        return format.renderer().render(sets);
    }

    /** Writes the charts of the results as PNG files into {@code dir} (created if needed) and returns them. */
    public static List<Path> writePngs(List<ResultSet> sets, Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Charts.Chart chart : Charts.of(sets, Labels.of(sets))) {
            files.add(Charts.png(chart, dir));
        }
        return files;
    }

    /**
     * Writes {@code report.html} for the run folder's {@code results.json} into the run folder (atomically,
     * so a reader never sees half a page) and returns its path.
     */
    public static Path writeHtml(Path runFolder) throws IOException {
        ResultSet read = new ResultReader().readFile(runFolder.resolve(ResultReader.RESULTS_FILE));
        // The page lies next to results.json: name it as the reader of the folder sees it.
        ResultSet set = new ResultSet(ResultReader.RESULTS_FILE, read.run(), read.scenarios(), read.frontiers());
        return writeAtomically(runFolder.resolve(HTML_FILE), renderSets(List.of(set), Format.HTML));
    }

    /** Writes a document as UTF-8 through a temporary file in the same folder and a rename. */
    public static Path writeAtomically(Path file, String content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        // Not Files.createTempFile: its owner-only permissions would stay on the report after the rename.
        Path tmp = dir.resolve(
                "." + file.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        try {
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            return Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
