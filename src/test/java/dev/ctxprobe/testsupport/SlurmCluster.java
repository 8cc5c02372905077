package dev.ctxprobe.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Whether a Slurm controller answers on this machine (as the one {@code .ci/slurm-up} brings up does), for the
 * tests that submit real jobs. Asked once per test JVM.
 */
public final class SlurmCluster {
    /** {@code sinfo} answers in milliseconds; without a controller it retries for 9 s, without a config for 60 s. */
    private static final long ANSWER_WITHIN_S = 3;

    private SlurmCluster() {}

    /** Skips the test (or fails it, where CI requires {@code slurm}) unless a cluster answers. */
    public static void assumeAvailable() {
        String why = Answer.ABSENCE;
        Required.assumePresent("slurm", why == null, why == null ? "" : why + "; start one with .ci/slurm-up");
    }

    /** Asked on first use; the holder class makes that once per JVM without locking. */
    private static final class Answer {
        /** Why no cluster answers, or null when one does. */
        static final String ABSENCE = ask();
    }

    private static String ask() {
        Process sinfo;
        try {
            sinfo = new ProcessBuilder("sinfo", "--noheader", "--format=%P %a")
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            return "sinfo is not on PATH (" + e.getMessage() + ")";
        }
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> readAll(sinfo.getInputStream()));
        try {
            if (!sinfo.waitFor(ANSWER_WITHIN_S, TimeUnit.SECONDS)) {
                sinfo.destroyForcibly().waitFor();
                return "sinfo did not answer within " + ANSWER_WITHIN_S + " s (no controller reachable)";
            }
            String said = output.join().strip();
            if (sinfo.exitValue() != 0) {
                return "sinfo exited with " + sinfo.exitValue() + ": " + firstLine(said);
            }
            if (said.isEmpty()) {
                return "sinfo answered but lists no partition";
            }
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sinfo.destroyForcibly();
            return "interrupted while asking sinfo";
        }
    }

    private static String readAll(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String firstLine(String text) {
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
