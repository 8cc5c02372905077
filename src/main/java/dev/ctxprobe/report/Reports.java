package dev.ctxprobe.report;

import dev.ctxprobe.results.ResultFiles;
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
     * Reads results files, run folders or folders of run folders, in order, through the one results reader.
     *
     * @throws ResultFiles.ResultFileException naming each input or file and its problems (missing, not JSON with
     *     line and column, a key of the wrong type or out of range)
     * @throws IllegalArgumentException when {@code inputs} is empty
     */
    public static List<ReportInput> read(List<Path> inputs) throws ResultFiles.ResultFileException {
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException("no results files or run folders given");
        }
        List<ReportInput> read = new ArrayList<>();
        for (Path input : inputs) {
            for (Path file : ResultFiles.find(input)) {
                read.add(new ReportInput(file.toString(), ResultFiles.read(file)));
            }
        }
        return read;
    }

    /** Reads the inputs and renders them as one document. */
    public static String renderFiles(List<Path> inputs, Format format) throws ResultFiles.ResultFileException {
        return render(read(inputs), format);
    }

    /** Renders results already read. */
    public static String render(List<ReportInput> inputs, Format format) {
        return format.renderer().render(inputs);
    }

    /**
     * Renders results already read; {@code wide} keeps every column in a text report instead of fitting it to 120
     * columns (Markdown, HTML and CSV always keep every column).
     */
    public static String render(List<ReportInput> inputs, Format format, boolean wide) {
        return format == Format.TEXT && wide ? new TextReport(true).render(inputs) : render(inputs, format);
    }

    /** Writes the charts of the results as PNG files into {@code dir} (created if needed) and returns them. */
    public static List<Path> writePngs(List<ReportInput> inputs, Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Charts.Chart chart : Charts.of(inputs, Labels.of(inputs))) {
            files.add(Charts.png(chart, dir));
        }
        return files;
    }

    /**
     * Writes {@code report.html} for the run folder's {@code results.json} into the run folder (atomically,
     * so a reader never sees half a page) and returns its path.
     */
    public static Path writeHtml(Path runFolder) throws IOException {
        // The page lies next to results.json: name it as the reader of the folder sees it.
        ReportInput input = new ReportInput(ResultFiles.NAME, ResultFiles.read(runFolder.resolve(ResultFiles.NAME)));
        return writeAtomically(runFolder.resolve(HTML_FILE), render(List.of(input), Format.HTML));
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
