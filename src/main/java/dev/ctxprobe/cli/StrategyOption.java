package dev.ctxprobe.cli;

import dev.ctxprobe.experiment.Experiment;
import picocli.CommandLine;

/** {@code --strategy list|frontier}, in the file's lower-case words. */
final class StrategyOption implements CommandLine.ITypeConverter<Experiment.Strategy> {
    @Override
    public Experiment.Strategy convert(String value) {
        try {
            return Experiment.Strategy.of(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
