package dev.ctxprobe.run;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.launch.Launchers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fixed ports of a run's local servers, held for the whole run: two runs that launch servers on one port would
 * each see the other's server (a port taken, an address in use) and record a frontier that is not theirs. A run
 * whose port another live ctxprobe holds is refused before it launches anything. The locks live in a folder of this
 * user's in the temp folder, one file per port; ports ctxprobe picks itself are free by construction.
 */
final class PortLocks implements AutoCloseable {
    private final List<RunLock> held;

    private PortLocks(List<RunLock> held) {
        this.held = held;
    }

    /** The folder of the port locks. */
    static Path folder() {
        return Path.of(System.getProperty("java.io.tmpdir"), "ctxprobe-" + System.getProperty("user.name"), "ports");
    }

    /** A file name for {@code text} (a folder's path): the first 16 hex digits of its SHA-256. */
    static String key(String text) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("this Java has no SHA-256", e);
        }
    }

    /**
     * Locks the fixed port of every backend of {@code e} that launches a local server.
     *
     * @param where the run's folder or its experiment's, named in the lock for whoever is refused
     * @throws RunFolder.Refused naming the port, the backend and the run that holds it
     */
    static PortLocks acquire(Experiment e, Path where) throws RunFolder.Refused {
        Map<Integer, String> ports = new TreeMap<>();
        for (Backend b : e.backends()) {
            if (b.port() != null && b.launcher().kind().equals(Launchers.DEFAULT_KIND)) {
                ports.putIfAbsent(b.port(), b.name());
            }
        }
        List<RunLock> held = new ArrayList<>();
        if (ports.isEmpty()) {
            return new PortLocks(held);
        }
        Path dir = folder();
        try {
            Files.createDirectories(dir);
        } catch (IOException | SecurityException unusable) {
            // Without a place for the locks the run goes on as before: the preflight still finds a port in use.
            return new PortLocks(held);
        }
        for (Map.Entry<Integer, String> p : ports.entrySet()) {
            Path file = dir.resolve(p.getKey() + ".lock");
            RunLock lock;
            try {
                lock = RunLock.tryAcquire(
                        file,
                        "ctxprobe pid " + ProcessHandle.current().pid() + " running " + e.name() + " in " + where);
            } catch (IOException unusable) {
                continue;
            }
            if (lock == null) {
                closeAll(held);
                throw new RunFolder.Refused("port " + p.getKey() + " of backend " + p.getValue()
                        + " is in use by another run (" + RunLock.holder(file)
                        + "): wait for it to end, or give this backend another port (or none, to let ctxprobe pick"
                        + " one); nothing was launched");
            }
            held.add(lock);
        }
        return new PortLocks(held);
    }

    @Override
    public void close() {
        closeAll(held);
    }

    private static void closeAll(List<RunLock> locks) {
        for (RunLock l : locks) {
            try {
                l.close();
            } catch (IOException ignored) {
                // The lock goes with the process anyway.
            }
        }
    }
}
