package dev.ctxprobe.report;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** The report formats, each keyed to the renderer that writes it. */
public enum Format {
    TEXT("txt", TextReport::new),
    MD("md", MarkdownReport::new),
    HTML("html", HtmlReport::new),
    CSV("csv", CsvReport::new);

    private final String extension;
    private final Supplier<ReportRenderer> renderer;

    Format(String extension, Supplier<ReportRenderer> renderer) {
        this.extension = extension;
        this.renderer = renderer;
    }

    /** The name on the command line, e.g. {@code md}. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The usual file extension, without the dot. */
    public String extension() {
        return extension;
    }

    ReportRenderer renderer() {
        return renderer.get();
    }

    /** The format for a command-line name, case-insensitive. */
    public static Format fromId(String id) {
        return Arrays.stream(values())
                .filter(f -> f.id().equalsIgnoreCase(id))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown report format '" + id + "' (expected "
                        + Arrays.stream(values()).map(Format::id).collect(Collectors.joining(", ")) + ")"));
    }

    /** The format a file name asks for by its extension ({@code report.html}), if any. */
    public static Optional<Format> forFileName(String fileName) {
        String lower = fileName.toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(f -> lower.endsWith("." + f.extension()) || lower.endsWith("." + f.id()))
                .findFirst();
    }

    @Override
    public String toString() {
        return id();
    }
}
