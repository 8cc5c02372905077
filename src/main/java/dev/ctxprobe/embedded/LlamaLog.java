package dev.ctxprobe.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A copy of llama.cpp's own log in a temp file, read when loading fails: the library's exception says only "could not
 * load model from given file path", the cause is only in that log. A log callback ({@code LlamaModel.setLogger}) cannot
 * catch it: loading calls {@code common_init()}, which puts llama.cpp's console logger back.
 */
final class LlamaLog {
    private static final List<String> CAUSE_MARKERS =
            List.of("failed to allocate", "bad_alloc", "out of memory", "failed to create context", "failed to");
    private static final long SETTLE_MS = 1000;
    // What llama.cpp's server logs last before the library throws.
    private static final String LAST_WORD = "failed to load model";

    private final Path file;

    private LlamaLog(Path file) {
        this.file = file;
    }

    static LlamaLog create() {
        try {
            Path file = Files.createTempFile("ctxprobe-llama-", ".log");
            return new LlamaLog(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp file for llama.cpp's log", e);
        }
    }

    Path file() {
        return file;
    }

    /**
     * Removes the file once it has served its purpose; llama.cpp keeps its descriptor and writes on into the unlinked
     * file (a few lines per request), so nothing is left behind even when the process is killed.
     */
    void discard() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete llama.cpp's temp log " + file, e);
        }
    }

    /**
     * The most telling line about a failure: the latest one naming an allocation problem, else the latest failure.
     * llama.cpp writes its log from a worker thread, so this waits (up to a second) for the server's own last word on
     * the failed load before choosing.
     */
    Optional<String> failureCause() throws InterruptedException {
        long deadline = System.currentTimeMillis() + SETTLE_MS;
        while (!lines().stream().anyMatch(l -> l.contains(LAST_WORD)) && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        List<String> lines = lines();
        for (String marker : CAUSE_MARKERS) {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).toLowerCase(Locale.ROOT).contains(marker)) {
                    return Optional.of(lines.get(i).strip());
                }
            }
        }
        return Optional.empty();
    }

    private List<String> lines() {
        try {
            return Files.readAllLines(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            // No log to read means no better cause than the library's own message, which the caller falls back to.
            return List.of();
        }
    }
}
