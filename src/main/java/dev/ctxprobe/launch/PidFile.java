package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The process groups a run has live, kept in the run folder ({@code servers.pid}), so that a run killed with
 * SIGKILL can have its servers found and stopped by {@code --resume} or the next run.
 */
public final class PidFile {
    private final Path file;
    private final Set<Long> groups = new LinkedHashSet<>();

    /** Opens the pid file of a run folder, keeping the groups it already names. */
    public PidFile(Path file) {
        this.file = file;
        groups.addAll(read(file));
    }

    public Path path() {
        return file;
    }

    public synchronized void add(long pgid) {
        groups.add(pgid);
        write();
    }

    public synchronized void remove(long pgid) {
        groups.remove(pgid);
        write();
    }

    /** The groups a file names, whether or not they are still alive. */
    public static List<Long> read(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<Long> out = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                String t = line.strip();
                if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
                    out.add(Long.parseLong(t));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the pid file " + file, e);
        }
    }

    private void write() {
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            StringBuilder sb = new StringBuilder();
            groups.forEach(g -> sb.append(g).append('\n'));
            Files.writeString(tmp, sb);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the pid file " + file, e);
        }
    }
}
