package dev.ctxprobe.results;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Where a run came from: the git state of the experiment's repository and the Python environment. */
public final class Provenance {
    private Provenance() {}

    /** Git facts of the repository holding {@code file}. */
    public record Git(String commit, String dirty) {}

    /** The short commit and "dirty"/"clean" of the repository holding {@code file}; "" and "clean" outside git. */
    public static Git git(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        String commit = run(dir, "git", "rev-parse", "--short", "HEAD");
        if (commit == null || commit.isBlank()) {
            return new Git("", "clean");
        }
        String status = run(dir, "git", "status", "--porcelain", "--untracked-files=no");
        return new Git(commit.strip(), status != null && !status.isBlank() ? "dirty" : "clean");
    }

    /** The conda or virtualenv environment of this process (engines inherit it), else "". */
    public static String pythonEnv(Map<String, String> env) {
        for (String key : List.of("CONDA_PREFIX", "VIRTUAL_ENV")) {
            String v = env.get(key);
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return "";
    }

    // Output goes to a file, not a pipe: reading a pipe before the wait would block for as long as git stalls
    // (a hung network filesystem, a lock), and waiting first could fill the pipe. Git gets 5 s, then it is killed.
    private static String run(Path dir, String... cmd) {
        Path out = null;
        try {
            out = Files.createTempFile("ctxprobe-git", ".out");
            Process p = new ProcessBuilder(cmd)
                    .directory(dir.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            if (p.exitValue() != 0) {
                return null;
            }
            try (var in = Files.newInputStream(out)) {
                return new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // A temp file left in the temp folder harms nothing.
                }
            }
        }
    }
}
