package dev.ctxprobe.launch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The kinds of launcher this ctxprobe knows: {@code local}, built in, and any other registered as a {@link
 * LauncherProvider} service (the cluster launcher, a test's own).
 */
public final class Launchers {
    /** The kind an experiment gets when it names none. */
    public static final String DEFAULT_KIND = LocalLauncher.KIND;

    private static final Map<String, LauncherProvider> PROVIDERS = load();

    private Launchers() {}

    private static Map<String, LauncherProvider> load() {
        Map<String, LauncherProvider> byKind = new LinkedHashMap<>();
        byKind.put(LocalLauncher.KIND, new LocalLauncher.Provider());
        for (LauncherProvider p : ServiceLoader.load(LauncherProvider.class)) {
            if (byKind.putIfAbsent(p.kind(), p) != null) {
                throw new IllegalStateException("two launchers call themselves '" + p.kind() + "'");
            }
        }
        return Collections.unmodifiableMap(byKind);
    }

    /** The known kinds, {@code local} first. */
    public static List<String> kinds() {
        return List.copyOf(PROVIDERS.keySet());
    }

    /** The provider of a kind. */
    public static LauncherProvider provider(String kind) {
        LauncherProvider p = PROVIDERS.get(kind);
        if (p == null) {
            throw new IllegalArgumentException(
                    "unknown launcher '" + kind + "'; known launchers: " + String.join(", ", PROVIDERS.keySet()));
        }
        return p;
    }

    /**
     * Stops every server a ledger names that is still alive and still the same server, and forgets those that are
     * gone; one that survives stays listed so the next look finds it again.
     *
     * @return one line per server found alive, for the user
     */
    public static List<String> stopLeftovers(Ledger ledger, Duration wait) {
        List<String> report = new ArrayList<>();
        for (Ledger.Entry entry : ledger.entries()) {
            LauncherProvider provider = PROVIDERS.get(entry.kind());
            if (provider == null) {
                report.add("the servers file names a '" + entry.kind() + "' server " + entry.fields()
                        + " that this ctxprobe cannot stop; stop it by hand");
                continue;
            }
            Optional<LauncherProvider.Leftover> found = provider.stopLeftover(entry, wait);
            found.ifPresent(l -> report.add(l.report()));
            if (found.map(LauncherProvider.Leftover::gone).orElse(true)) {
                ledger.remove(entry);
            }
        }
        return report;
    }
}
