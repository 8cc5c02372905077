package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.predict.PlanFormat;
import dev.ctxprobe.predict.Prediction;
import dev.ctxprobe.run.Experiments;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ctxprobe plan}: the frontier each backend will serve, predicted before anything is launched. */
@Command(
        name = "plan",
        mixinStandardHelpOptions = true,
        description = {
            "Predict, launching nothing, the longest prompt each backend of an experiment will serve: the bound that"
                    + " sets it, the arithmetic, every input with its source, and what is missing.",
            "A frontier search starts from this prediction (sweep.frontier.start: plan, the default)."
        })
final class PlanCommand implements Callable<Integer> {

    /** The renderings of a plan. */
    enum Format {
        TEXT,
        MD,
        JSON
    }

    /** {@code --format text|md|json}, in lower-case words. */
    static final class FormatOption implements CommandLine.ITypeConverter<Format> {
        @Override
        public Format convert(String value) {
            for (Format f : Format.values()) {
                if (f.name().toLowerCase(Locale.ROOT).equals(value)) {
                    return f;
                }
            }
            throw new CommandLine.TypeConversionException("--format is text, md or json, not '" + value + "'");
        }
    }

    @Parameters(index = "0", paramLabel = "EXPERIMENT.yaml", description = "The experiment file.")
    Path file;

    @Option(
            names = "--format",
            paramLabel = "text|md|json",
            converter = FormatOption.class,
            description = "text (default), md or json (the shape of results.json's frontier.<backend>.predicted).")
    Format format = Format.TEXT;

    @Mixin
    PredictionOptions prediction;

    @Override
    public Integer call() throws ExperimentError {
        Prediction plan = prediction.predict(Experiments.load(file));
        String out = switch (format) {
            case TEXT -> PlanFormat.text(plan);
            case MD -> PlanFormat.markdown(plan);
            case JSON -> PlanFormat.json(plan) + "\n";
        };
        System.out.print(out);
        return Main.OK;
    }
}
