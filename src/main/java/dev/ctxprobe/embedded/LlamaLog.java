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

    private final Path file;

    private LlamaLog(Path file) {
        this.file = file;
    }

    static LlamaLog create() {
        try {
            Path file = Files.createTempFile("ctxprobe-llama-", ".log");
            file.toFile().deleteOnExit();
            return new LlamaLog(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp file for llama.cpp's log", e);
        }
    }

    Path file() {
        return file;
    }

    /**
     * The most telling line about a failure: the latest one naming an allocation problem, else the latest failure.
     * llama.cpp writes its log from a worker thread, so this waits briefly for the line to arrive.
     */
    Optional<String> failureCause() throws InterruptedException {
        long deadline = System.currentTimeMillis() + SETTLE_MS;
        while (true) {
            Optional<String> cause = scan();
            if (cause.isPresent() || System.currentTimeMillis() > deadline) {
                return cause;
            }
            Thread.sleep(50);
        }
    }

    private Optional<String> scan() {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return Optional.empty();
        }
        for (String marker : CAUSE_MARKERS) {
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).toLowerCase(Locale.ROOT).contains(marker)) {
                    return Optional.of(lines.get(i).strip());
                }
            }
        }
        return Optional.empty();
    }
}
