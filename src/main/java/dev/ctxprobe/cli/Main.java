package dev.ctxprobe.cli;

import dev.ctxprobe.client.Carriers;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.report.TerminalText;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    /**
     * Exit codes (README.md#commands): 0 done (failed steps are data), 2 usage or configuration, 130 interrupted, 129
     * interrupted by a hang-up (SIGHUP).
     */
    public static final int OK = 0;

    public static final int FAILED = 1;
    public static final int USAGE = 2;
    public static final int INTERRUPTED = 130;
    public static final int HUNG_UP = 129;

    // picocli names the Java type a value did not convert to: "'abc' is not an int".
    private static final Pattern NOT_A_TYPE = Pattern.compile("is not an? (int|long|short|byte|float|double)\\b");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private static volatile boolean standalone;

    public static void main(String[] args) {
        standalone = true;
        // Before any virtual thread: the client's timing needs its carriers however the JVM was started.
        Carriers.configure();
        ExitSignals.watch();
        int code;
        try {
            code = execute(args);
        } catch (Throwable t) {
            // An Error (a native library that does not load) escapes picocli; without this exit, a live
            // non-daemon thread (serve's HTTP server) would keep the JVM running after main has died.
            code = unexpected(t);
        }
        System.exit(ExitSignals.exitCode(code));
    }

    /** Whether this JVM is the ctxprobe process ({@link #main}), not a test's that calls {@link #execute}. */
    static boolean standalone() {
        return standalone;
    }

    /** Runs a command line and returns its exit code; tests call this instead of {@link #main}. */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExitCodeExceptionMapper(Main::exitCode);
        cl.setParameterExceptionHandler(Main::badCommandLine);
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> ended(e, cmd));
        return cl;
    }

    /** The one map from what ended a command to its exit code: bad input 2, what an ExitException says, else 1. */
    static int exitCode(Throwable t) {
        if (t instanceof ExitException x) {
            return x.code();
        }
        return t instanceof ExperimentError || t instanceof CommandLine.ParameterException ? USAGE : FAILED;
    }

    /** Tells the user why {@code cmd} ended, in sentences and never a stack trace, and returns the exit code. */
    private static int ended(Exception e, CommandLine cmd) {
        PrintWriter err = cmd.getErr();
        if (e instanceof ExitException x) {
            String by = x.saidByCommand() ? cmd.getCommandSpec().qualifiedName() : "ctxprobe";
            x.lines().forEach(line -> err.println(by + ": " + TerminalText.lines(line)));
            switch (x.help()) {
                case HINT -> err.println(helpHint(cmd));
                case USAGE -> cmd.usage(err);
                case NONE -> {}
            }
        } else if (e instanceof ExperimentError located) {
            // file:line:column first, as compilers write it, so that editors can jump to it.
            err.println(TerminalText.lines(located.getMessage()));
        } else {
            return unexpected(e);
        }
        err.flush();
        return exitCode(e);
    }

    /** No command: the usage, on stderr with exit code 2, as git and docker do; a silent 0 told a script nothing. */
    @Override
    public void run() {
        throw ExitException.usage("give a command: "
                        + String.join(", ", spec.commandLine().getSubcommands().keySet()))
                .then(ExitException.Help.USAGE);
    }

    /**
     * The program as the user typed it, for the commands ctxprobe suggests: {@code ./ctxprobe} in a clone, whose
     * launcher script names itself in {@code CTXPROBE_PROGRAM}; {@code ctxprobe} otherwise.
     */
    static String program() {
        String typed = System.getenv("CTXPROBE_PROGRAM");
        return typed == null || typed.isBlank() || typed.chars().anyMatch(Character::isISOControl) ? "ctxprobe" : typed;
    }

    /** The version from the jar manifest, or "dev" when running from classes. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"ctxprobe " + dev.ctxprobe.run.Version.of()};
        }
    }

    /** A message to the user on stderr, prefixed with the program's name. */
    // Messages quote files and servers (a value, a name, a body): the terminal gets their text, never their
    // control sequences.
    static void err(String message) {
        System.err.println("ctxprobe: " + TerminalText.lines(message));
    }

    /** One sentence about what was wrong on the command line and where help is, instead of picocli's usage dump. */
    private static int badCommandLine(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        String name = cmd.getCommandSpec().qualifiedName();
        PrintWriter err = cmd.getErr();
        err.println(name + ": " + commandLineProblem(e));
        err.println(helpHint(cmd));
        err.flush();
        return exitCode(e);
    }

    private static String helpHint(CommandLine cmd) {
        String name = cmd.getCommandSpec().qualifiedName();
        String typed = name.startsWith("ctxprobe") ? program() + name.substring("ctxprobe".length()) : name;
        return "Try '" + typed + " --help' for more information.";
    }

    static String commandLineProblem(CommandLine.ParameterException e) {
        CommandLine cmd = e.getCommandLine();
        if (e instanceof CommandLine.UnmatchedArgumentException u
                && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().getFirst();
            List<String> suggestions = u.getSuggestions();
            String hint = suggestions.isEmpty() ? "" : "; did you mean " + String.join(" or ", suggestions) + "?";
            if (first.startsWith("-")) {
                return "unknown option '" + first + "'" + hint;
            }
            if (cmd.getParent() == null) {
                return "unknown command '" + first + "'; the commands are "
                        + String.join(", ", cmd.getSubcommands().keySet()) + hint;
            }
            List<CommandLine.Model.PositionalParamSpec> positional =
                    cmd.getCommandSpec().positionalParameters();
            return positional.isEmpty()
                    ? "'" + first + "' is not expected here: this command takes options only"
                    : "'" + first + "' is one argument too many: give "
                            + positional.getLast().paramLabel()
                            + (positional.getLast().arity().max > 1 ? " arguments" : " once");
        }
        if (e instanceof CommandLine.MissingParameterException m
                && !m.getMissing().isEmpty()) {
            CommandLine.Model.ArgSpec missing = m.getMissing().getFirst();
            if (missing instanceof CommandLine.Model.OptionSpec o) {
                return o.longestName() + " needs a value: " + o.longestName() + " " + o.paramLabel();
            }
        }
        String message = e.getMessage() == null ? "the command line is not valid" : e.getMessage();
        Matcher m = NOT_A_TYPE.matcher(message);
        if (m.find()) {
            boolean whole = !m.group(1).equals("float") && !m.group(1).equals("double");
            message = m.replaceFirst(whole ? "is not a whole number" : "is not a number");
        }
        return message;
    }

    /**
     * A fault of ctxprobe's own reached the top: one line for the user, the trace in a file for the bug report. A
     * stack trace on the terminal tells a user nothing they can act on.
     */
    static int unexpected(Throwable t) {
        String what = t.getMessage() == null ? "no detail" : t.getMessage();
        String where;
        try {
            Path file = Files.createTempFile("ctxprobe-error-", ".txt");
            StringWriter trace = new StringWriter();
            t.printStackTrace(new PrintWriter(trace));
            Files.writeString(file, trace.toString(), StandardCharsets.UTF_8);
            where = "please report it with " + file;
        } catch (IOException | RuntimeException notWritten) {
            where = "please report it with the command that caused it";
        }
        err("an unexpected error stopped ctxprobe (" + what + "); this is a bug in ctxprobe, " + where);
        return FAILED;
    }
}
