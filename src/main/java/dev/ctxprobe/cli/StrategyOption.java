package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import java.util.Locale;
import picocli.CommandLine;

/** {@code --strategy list|frontier}, in the file's lower-case words. */
final class StrategyOption implements CommandLine.ITypeConverter<Experiment.Strategy> {
    @Override
    public Experiment.Strategy convert(String value) {
        try {
            return Experiment.Strategy.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException("--strategy is 'list' or 'frontier', not '" + value + "'");
        }
    }
}
