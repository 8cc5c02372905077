package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The process groups a run has live, kept in the run folder ({@code servers.pid}), so that a run killed with
 * SIGKILL can have its servers found and stopped by {@code --resume} or the next run.
 *
 * <p>Each line is {@code pgid start boot}: the leader's start time (clock ticks since boot) and the kernel's boot
 * id. A pid is reused after its process ends and across reboots, so a group is only treated as ours when these
 * still match; signalling a stranger's group would kill the wrong processes.
 */
public final class PidFile {
    /** One recorded group: its id and how to recognise that it is still the same group. */
    public record Entry(long pgid, long startTicks, String bootId) {}

    private final Path file;
    private final Map<Long, Entry> groups = new LinkedHashMap<>();

    /** Opens the pid file of a run folder, keeping the groups it already names. */
    public PidFile(Path file) {
        this.file = file;
        read(file).forEach(e -> groups.put(e.pgid(), e));
    }

    /** Records a group whose leader is running now. */
    public synchronized void add(long pgid) {
        groups.put(pgid, new Entry(pgid, ProcessGroups.startTicks(pgid), ProcessGroups.bootId()));
        write();
    }

    public synchronized void remove(long pgid) {
        groups.remove(pgid);
        write();
    }

    /** The groups a file names, whether or not they are still alive. */
    public static List<Entry> read(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<Entry> out = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                String[] f = line.strip().split("\\s+");
                if (f.length == 3 && f[0].matches("\\d+") && f[1].matches("-?\\d+")) {
                    out.add(new Entry(Long.parseLong(f[0]), Long.parseLong(f[1]), f[2]));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the pid file " + file, e);
        }
    }

    /**
     * The live processes of a recorded group, or none when the group is gone or the ids now belong to someone
     * else: the machine rebooted, or the leader's pid was reused by a later process.
     */
    public static List<Long> liveMembers(Entry e) {
        if (!e.bootId().equals(ProcessGroups.bootId())) {
            return List.of();
        }
        long leaderStart = ProcessGroups.startTicks(e.pgid());
        if (leaderStart >= 0 && leaderStart != e.startTicks()) {
            return List.of();
        }
        // With the leader gone, its workers keep the group id; anything older than the leader is not one of them.
        return ProcessGroups.members(e.pgid()).stream()
                .filter(pid -> ProcessGroups.startTicks(pid) >= e.startTicks())
                .toList();
    }

    /**
     * Stops every group this file names that is still ours and alive (TERM, wait, KILL) and forgets the ones that
     * are gone; a group that survives KILL stays listed so the next look finds it again.
     *
     * @return one line per group found alive, for the user
     */
    public synchronized List<String> stopLeftovers(Duration termWait) {
        List<String> report = new ArrayList<>();
        for (Entry entry : List.copyOf(groups.values())) {
            long pgid = entry.pgid();
            List<Long> members = liveMembers(entry);
            if (!members.isEmpty()) {
                ProcessGroups.signal(pgid, "TERM");
                if (!ProcessGroups.awaitGone(pgid, termWait)) {
                    ProcessGroups.signal(pgid, "KILL");
                    ProcessGroups.awaitGone(pgid, Duration.ofSeconds(5));
                }
                List<Long> left = liveMembers(entry);
                report.add("stopped leftover server group " + pgid + " " + members + " from " + file.getParent()
                        + (left.isEmpty() ? "" : "; still alive after KILL: " + left));
                if (!left.isEmpty()) {
                    continue;
                }
            }
            groups.remove(pgid);
        }
        write();
        return report;
    }

    private void write() {
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            StringBuilder sb = new StringBuilder();
            groups.values()
                    .forEach(g -> sb.append(g.pgid())
                            .append(' ')
                            .append(g.startTicks())
                            .append(' ')
                            .append(g.bootId())
                            .append('\n'));
            Files.writeString(tmp, sb);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the pid file " + file, e);
        }
    }
}
