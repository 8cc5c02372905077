package dev.ctxprobe.launch;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One kind of launcher, found by {@link Launchers} through {@link java.util.ServiceLoader}: it names its kind, checks
 * the options an experiment gives it, creates launchers, and stops servers that a killed run left in its ledger.
 */
public interface LauncherProvider {
    /** The word an experiment names it by, e.g. {@code local}. */
    String kind();

    /**
     * The problems of the options an experiment gives this kind, one sentence each, keyed by option name ({@code ""}
     * for the whole); empty when they are fine. A kind without options refuses each one.
     */
    default Map<String, String> check(Map<String, Object> options) {
        Map<String, String> problems = new java.util.LinkedHashMap<>();
        options.keySet()
                .forEach(k -> problems.put(k, "the " + kind() + " launcher takes no options; remove '" + k + "'"));
        return problems;
    }

    /** A launcher for one run with the experiment's options for this kind. */
    Launcher create(LaunchContext context, Map<String, Object> options);

    /**
     * Stops a server of this kind that a ledger names, if it is still the same server and alive (a reused pid or
     * job id belongs to someone else and is left alone), waiting up to {@code wait} for it to go.
     *
     * @return what was found and done, or empty when nothing of it was alive
     */
    Optional<Leftover> stopLeftover(Ledger.Entry entry, Duration wait);

    /**
     * A leftover server found alive.
     *
     * @param report one line for the user
     * @param gone false when it survived everything tried: the entry stays in the ledger for the next look
     */
    record Leftover(String report, boolean gone) {}

    /** Option names this kind accepts, for messages; none by default. */
    default List<String> optionNames() {
        return List.of();
    }

    /**
     * Placeholders this kind fills in itself at launch, one value per node (e.g. {@code node_rank}): a command may
     * use them, and they reach the launcher as written.
     */
    default Set<String> placeholders() {
        return Set.of();
    }
}
