package dev.ctxprobe.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code ctxprobe} command: wires subcommands and owns the only {@code System.exit}. */
@Command(
        name = "ctxprobe",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Finds the longest context an LLM serving deployment really serves, and how fast.",
        subcommands = {
            RunCommand.class,
            ValidateCommand.class,
            PlanCommand.class,
            ReportCommand.class,
            ServeCommand.class,
            CommandLine.HelpCommand.class
        })
public final class Main implements Runnable {

    /** Exit codes of spec 01: 0 done (failed steps are data), 2 usage or configuration, 130 interrupted. */
    public static final int OK = 0;

    public static final int FAILED = 1;
    public static final int USAGE = 2;
    public static final int INTERRUPTED = 130;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs a command line and returns its exit code; tests call this instead of {@link #main}. */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExitCodeExceptionMapper(t -> t instanceof CommandLine.ParameterException ? USAGE : FAILED);
        return cl;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }

    /** The version from the jar manifest, or "dev" when running from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"ctxprobe " + dev.ctxprobe.run.Version.of()};
        }
    }

    /** A message to the user on stderr, prefixed with the program's name. */
    static void err(String message) {
        System.err.println("ctxprobe: " + message);
    }
}
