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
 * The servers a run has live, kept in its folder ({@code servers.pid}) so that a run killed with SIGKILL can have
 * them found and stopped by {@code --resume} or the next run. One line per server: the launcher's kind, then what
 * that launcher needs to recognise and stop it (a local process group with its start time and boot id, a cluster
 * job id with its name). A line of three fields without a kind is a local group, as older runs wrote it. A local
 * launch is written before its process starts, with group -1 and its mark, and completed once the process runs.
 */
public final class Ledger {
    /** The file's name inside a run folder. */
    public static final String NAME = "servers.pid";

    /** One recorded server: the kind of launcher that started it and its fields. */
    public record Entry(String kind, List<String> fields) {
        public Entry {
            fields = List.copyOf(fields);
            if (kind.isBlank() || kind.contains(" ") || fields.stream().anyMatch(f -> f.isBlank() || f.contains(" "))) {
                throw new IllegalArgumentException("a ledger entry is words without spaces: " + kind + " " + fields);
            }
        }

        String line() {
            return kind + " " + String.join(" ", fields);
        }
    }

    private final Path file;
    private final Set<Entry> entries = new LinkedHashSet<>();

    /** Opens the ledger of a run folder, keeping the servers it already names. */
    public Ledger(Path runDir) {
        this.file = runDir.resolve(NAME);
        entries.addAll(read(file));
    }

    public synchronized void add(Entry e) {
        entries.add(e);
        write();
    }

    /** Replaces {@code old} with {@code e} in one write. */
    public synchronized void replace(Entry old, Entry e) {
        entries.remove(old);
        entries.add(e);
        write();
    }

    public synchronized void remove(Entry e) {
        if (entries.remove(e)) {
            write();
        }
    }

    /**
     * Removes the file when it names no server: a run that stopped all it started leaves no empty file behind. A file
     * that still names one stays, for the next run to stop.
     */
    public synchronized void removeIfEmpty() throws IOException {
        if (entries.isEmpty()) {
            Files.deleteIfExists(file);
        }
    }

    /** The servers recorded now. */
    public synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    /** The servers a ledger file names, whether or not they are still alive; none when there is no file. */
    public static List<Entry> read(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<Entry> out = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                String[] f = line.strip().split("\\s+");
                if (f.length == 3 && f[0].matches("\\d+")) {
                    out.add(new Entry(LocalLauncher.KIND, List.of(f)));
                } else if (f.length >= 2 && f[0].matches("[a-z][a-z0-9-]*")) {
                    out.add(new Entry(f[0], List.of(f).subList(1, f.length)));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the servers file " + file, e);
        }
    }

    private void write() {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            StringBuilder sb = new StringBuilder();
            entries.forEach(e -> sb.append(e.line()).append('\n'));
            Files.writeString(tmp, sb);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the servers file " + file, e);
        }
    }
}
