package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.FileReason;
import dev.ctxprobe.report.Format;
import dev.ctxprobe.report.ReportInput;
import dev.ctxprobe.report.Reports;
import dev.ctxprobe.results.ResultFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ctxprobe report RESULTS...}: renders results files or run folders as text, Markdown, HTML or CSV. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        description = "Render result files (results.json, or the seeds' files) or run folders as tables and charts.")
public final class ReportCommand implements Callable<Integer> {

    // Arity 0, checked in call(), so that no inputs gets the sentence below rather than picocli's.
    @Parameters(
            arity = "0..*",
            paramLabel = "RESULTS",
            description = "results files, run folders, or folders holding run folders (at least one)")
    List<Path> inputs = List.of();

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            converter = FormatOption.class,
            description = "text, md, html or csv (default: from the extension of --out, else text)")
    Format format;

    @Option(names = "--out", paramLabel = "FILE", description = "write the report to FILE instead of stdout")
    Path out;

    @Option(names = "--png", paramLabel = "DIR", description = "also write the charts as PNG files into DIR")
    Path pngDir;

    @Option(
            names = "--wide",
            description = "text: every column, unwrapped (by default the text report fits 120 columns; md, html and"
                    + " csv always show every column)")
    boolean wide;

    @Option(
            names = "--label",
            paramLabel = "NAME",
            description = "a name for each RESULTS, in order, used instead of the hardware when runs are compared"
                    + " (give one per RESULTS)")
    List<String> labels = List.of();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code --format} in the lower-case words of the help text, whatever case is typed. */
    static final class FormatOption implements CommandLine.ITypeConverter<Format> {
        @Override
        public Format convert(String value) {
            try {
                return Format.fromId(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    @Override
    public Integer call() {
        if (inputs.isEmpty()) {
            throw ExitException.usage("no results given: name results files or run folders")
                    .byCommand()
                    .then(ExitException.Help.USAGE);
        }
        Format chosen = format != null
                ? format
                : out == null
                        ? Format.TEXT
                        : Format.forFileName(out.getFileName().toString()).orElse(Format.TEXT);
        if (!labels.isEmpty() && labels.size() != inputs.size()) {
            throw ExitException.usage("give one --label per RESULTS: " + labels.size() + " --label for " + inputs.size()
                            + " RESULTS")
                    .byCommand();
        }
        List<ReportInput> read = new ArrayList<>();
        try {
            for (int i = 0; i < inputs.size(); i++) {
                String label = labels.isEmpty() ? null : labels.get(i);
                Reports.read(List.of(inputs.get(i))).forEach(r -> read.add(label == null ? r : r.labelled(label)));
            }
        } catch (ResultFiles.ResultFileException e) {
            List<String> lines = new ArrayList<>(e.getMessage().lines().toList());
            lines.add("correct the file or leave it out; nothing was written");
            throw ExitException.usage(lines).byCommand();
        }
        String document = Reports.render(read, chosen, wide);
        PrintWriter err = spec.commandLine().getErr();
        try {
            if (out == null) {
                spec.commandLine().getOut().print(document);
                spec.commandLine().getOut().flush();
            } else {
                Reports.writeAtomically(out, document);
                err.println("wrote " + out);
            }
            if (pngDir != null) {
                for (Path png : Reports.writePngs(read, pngDir)) {
                    err.println("wrote " + png);
                }
            }
        } catch (IOException e) {
            String where = e instanceof java.nio.file.FileSystemException f && f.getFile() != null ? f.getFile() : "it";
            throw ExitException.failed("cannot write " + where + " (" + FileReason.of(e) + "); give another --out")
                    .byCommand();
        }
        return Main.OK;
    }
}
