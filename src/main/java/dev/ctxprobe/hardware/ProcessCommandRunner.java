package dev.ctxprobe.hardware;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Runs a tool as a child process with a time limit, keeping at most a bounded amount of its output: the accelerator
 * queries, and (run to their end) the commands of a cluster's scheduler.
 */
public final class ProcessCommandRunner implements CommandRunner {

    // A missing program: "error=2, No such file or directory" (JDK 17) or "error: 2 (No such file ...)" (JDK 25).
    private static final Pattern NO_SUCH_PROGRAM = Pattern.compile("error(=|: )2\\b");

    private final Duration timeout;
    private final int maxOutputBytes;
    private final boolean toTheEnd;
    private final String limitText;

    /** A runner whose commands an interrupt cuts short ({@code interrupted}), for queries nothing depends on. */
    public ProcessCommandRunner(Duration timeout, int maxOutputBytes) {
        this(timeout, maxOutputBytes, false, timeout.toMillis() + " ms");
    }

    private ProcessCommandRunner(Duration timeout, int maxOutputBytes, boolean toTheEnd, String limitText) {
        this.timeout = timeout;
        this.maxOutputBytes = maxOutputBytes;
        this.toTheEnd = toTheEnd;
        this.limitText = limitText;
    }

    /**
     * A runner whose commands an interrupt does not cut short: one abandoned half way may still act (an
     * {@code sbatch} may submit a job nobody knows of), so each runs to its end within {@code limit}, whole seconds,
     * and an interrupt is kept for the caller. Its output is kept whole.
     */
    public static ProcessCommandRunner toTheEnd(Duration limit) {
        return new ProcessCommandRunner(limit, Integer.MAX_VALUE, true, limit.toSeconds() + " s");
    }

    @Override
    public CommandResult run(List<String> command) {
        return run(command, Map.of());
    }

    /**
     * As {@link #run(List)}, with {@code env} added to the command's environment: how a secret reaches a command
     * without being written into its arguments or a file (docs/slurm.md#secrets).
     */
    public CommandResult run(List<String> command, Map<String, String> env) {
        // Most machines lack two of the three accelerator tools, and each query of one that is absent cost a child
        // process and two temporary files on the way to every launch; the PATH says the same for free.
        if (!onPath(command.getFirst())) {
            return CommandResult.failed(command, CommandResult.NOT_INSTALLED);
        }
        Path out = null;
        Path err = null;
        // A command run to its end waits with the interrupt set aside, and hands it back when it returns.
        boolean[] interrupted = {toTheEnd && Thread.interrupted()};
        try {
            out = Files.createTempFile("ctxprobe-command", ".out");
            err = Files.createTempFile("ctxprobe-command", ".err");
            // Output goes to files, never an undrained pipe, so a chatty tool cannot block on a full pipe.
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            builder.environment().putAll(env);
            Process process = builder.start();
            if (!await(process, timeout.toNanos(), interrupted)) {
                process.destroyForcibly();
                await(process, TimeUnit.SECONDS.toNanos(1), interrupted);
                return CommandResult.failed(command, "no answer within " + limitText);
            }
            return CommandResult.exited(command, process.exitValue(), readCapped(out), readCapped(err));
        } catch (IOException e) {
            String message = String.valueOf(e.getMessage());
            boolean absent = NO_SUCH_PROGRAM.matcher(message).find();
            return CommandResult.failed(command, absent ? CommandResult.NOT_INSTALLED : message);
        } catch (InterruptedException e) {
            interrupted[0] = true;
            return CommandResult.failed(command, "interrupted");
        } finally {
            delete(out);
            delete(err);
            if (interrupted[0]) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether {@code program} may start: false only for a bare name that no {@code PATH} entry holds (an empty entry
     * meaning the working directory, as the JDK's launch reads it). A name with a slash, a file that is there but
     * not executable, or no PATH at all is left to starting it, which says what is wrong.
     */
    static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (program.contains("/") || path == null) {
            return true;
        }
        try {
            for (String dir : path.split(":", -1)) {
                if (Files.exists(Path.of(dir.isEmpty() ? "." : dir, program))) {
                    return true;
                }
            }
        } catch (InvalidPathException e) {
            return true;
        }
        return false;
    }

    /**
     * Waits up to {@code nanos} for the process to exit, and says whether it did. An interrupt cuts the wait short
     * unless commands run to their end: then it is noted in {@code interrupted[0]} and the wait goes on.
     */
    private boolean await(Process process, long nanos, boolean[] interrupted) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (true) {
            try {
                return process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                if (!toTheEnd) {
                    throw e;
                }
                interrupted[0] = true;
            }
        }
    }

    private String readCapped(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(maxOutputBytes), StandardCharsets.UTF_8);
        }
    }

    private static void delete(Path file) {
        if (file == null) {
            return;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // A temp file that cannot be deleted now is retried at exit; the command's result still stands.
            file.toFile().deleteOnExit();
        }
    }
}
