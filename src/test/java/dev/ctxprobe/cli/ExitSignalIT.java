package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A signal in ctxprobe's last moments still ends it with a signal's exit code, never 0 (README.md#commands): once the
 * JVM's exit has begun it runs no Java signal handler, so ctxprobe hands the signals back to their defaults just
 * before it exits. Each try here sends one SIGTERM a few milliseconds after ctxprobe's last line of output, at a
 * different delay each time, so that some land while the JVM is exiting.
 */
class ExitSignalIT {
    private static final int TRIES = 16;
    private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The kernel's flag of a task that is exiting (include/linux/sched.h). */
    private static final long PF_EXITING = 0x4;

    @Test
    void aSigtermAfterTheLastLineIsNeverExitZero() throws Exception {
        Map<String, Integer> seen = new TreeMap<>();
        Process shell = new ProcessBuilder("sh", "-c", "while read s p; do kill -$s $p 2>/dev/null; echo $?; done")
                .redirectErrorStream(true)
                .start();
        toShell = new BufferedWriter(new OutputStreamWriter(shell.getOutputStream(), StandardCharsets.UTF_8));
        fromShell = new BufferedReader(new InputStreamReader(shell.getInputStream(), StandardCharsets.UTF_8));
        try {
            tries(seen);
        } finally {
            shell.destroy();
        }
        System.out.println("SIGTERM after the last line of output: " + seen);
        assertThat(seen.keySet()).anyMatch(k -> k.startsWith("signalled"));
    }

    private void tries(Map<String, Integer> seen) throws Exception {
        for (int i = 0; i < TRIES; i++) {
            Process p = new ProcessBuilder(FaultRuns.ctxprobeArgv(List.of(), "--version"))
                    .redirectErrorStream(true)
                    .start();
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                assertThat(out.readLine()).as("the version line").isNotNull();
                long at = System.nanoTime() + i * STEP_NANOS;
                while (System.nanoTime() < at) {
                    Thread.onSpinWait();
                }
                boolean sent = sigtermWhileFrozen(p.pid());
                assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
                int code = p.exitValue();
                seen.merge((sent ? "signalled, exit " : "already gone, exit ") + code, 1, Integer::sum);
                if (sent) {
                    assertThat(code)
                            .as("exit code of ctxprobe signalled %d ms after its last line", i)
                            .isIn(Main.INTERRUPTED, 143);
                }
            }
        }
    }

    /**
     * Sends SIGTERM to a process frozen by SIGSTOP, then lets it go on; false when it had already begun to exit.
     * Frozen, it cannot begin its exit between the look at it and the signal: once a JVM has called exit_group the
     * exit code is fixed and the kernel drops any signal while it tears the process down, which is after the exit
     * whatever ctxprobe does. The leader's state and its PF_EXITING flag (0x4) in /proc/PID/stat tell.
     */
    private boolean sigtermWhileFrozen(long pid) throws Exception {
        if (!kill("STOP", pid)) {
            return false;
        }
        boolean sent = false;
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            String[] fields;
            while ((fields = stat(pid)) != null
                    && "TZX".indexOf(fields[0].charAt(0)) < 0
                    && (Long.parseLong(fields[6]) & PF_EXITING) == 0
                    && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            if (fields != null && fields[0].charAt(0) == 'T' && (Long.parseLong(fields[6]) & PF_EXITING) == 0) {
                sent = kill("TERM", pid);
            }
        } finally {
            kill("CONT", pid);
        }
        return sent;
    }

    // kill is a builtin of sh: a signal from this shell goes out within a fraction of a millisecond, where a kill
    // process of its own would take milliseconds to start, longer than ctxprobe takes to exit.
    private BufferedWriter toShell;
    private BufferedReader fromShell;

    private boolean kill(String signal, long pid) throws Exception {
        toShell.write(signal + " " + pid + "\n");
        toShell.flush();
        return "0".equals(fromShell.readLine());
    }

    // The fields of /proc/PID/stat after the command's closing parenthesis: the state first, the flags seventh.
    private static String[] stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        } catch (java.io.IOException | RuntimeException gone) {
            return null;
        }
    }
}
