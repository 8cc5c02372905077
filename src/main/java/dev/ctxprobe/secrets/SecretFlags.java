package dev.ctxprobe.secrets;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The command-line flags whose values are secrets, by their name: {@code --api-key}, {@code --hf-token}, {@code
 * --token}, every {@code --*-key}, {@code --*-secret} and {@code --*-password}, and those an experiment adds with
 * {@code secret_flags} (docs/experiment-file.md#secrets). A value follows its flag as the next word or after
 * {@code =}; either way it is shown as {@link Redactor#MASK}, and only the launch gets it.
 */
public final class SecretFlags {
    /** The flags that carry a secret whatever the experiment says. */
    public static final List<String> BUILT_IN = List.of("--api-key", "--hf-token", "--token");

    /** The endings of a long flag's name that say it carries a secret. */
    public static final List<String> ENDINGS = List.of("-key", "-secret", "-password");

    /** Only the built-in flags. */
    public static final SecretFlags DEFAULT = new SecretFlags(List.of());

    private final Set<String> extra;

    private SecretFlags(Collection<String> extra) {
        this.extra = new TreeSet<>();
        extra.forEach(f -> this.extra.add(normal(f)));
    }

    /** The built-in flags and {@code extra} ({@code secret_flags}, e.g. {@code --auth}). */
    public static SecretFlags of(Collection<String> extra) {
        return extra.isEmpty() ? DEFAULT : new SecretFlags(extra);
    }

    // Parsers differ on '_' against '-' and on case in long flags; masking every spelling costs nothing.
    private static String normal(String flag) {
        return flag.toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Whether {@code flag} (a word starting with {@code -}, without any {@code =value}) carries a secret. */
    public boolean carriesSecret(String flag) {
        if (!flag.startsWith("-")) {
            return false;
        }
        String f = normal(flag);
        if (BUILT_IN.contains(f) || extra.contains(f)) {
            return true;
        }
        return f.startsWith("--") && ENDINGS.stream().anyMatch(f::endsWith);
    }

    /** {@code argv} as it may be shown: the value of every secret-carrying flag replaced by {@link Redactor#MASK}. */
    public List<String> shown(List<String> argv) {
        List<String> out = new ArrayList<>(argv);
        for (int i = 0; i < argv.size(); i++) {
            String w = argv.get(i);
            int eq = w.indexOf('=');
            if (eq > 0 && carriesSecret(w.substring(0, eq))) {
                out.set(i, w.substring(0, eq + 1) + Redactor.MASK);
            } else if (eq < 0 && carriesSecret(w) && takesValue(argv, i)) {
                out.set(i + 1, Redactor.MASK);
                i++;
            }
        }
        return out;
    }

    /** The values of the secret-carrying flags in {@code argv}: what logs and results must not show either. */
    public List<String> values(List<String> argv) {
        List<String> found = new ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            String w = argv.get(i);
            int eq = w.indexOf('=');
            if (eq > 0 && carriesSecret(w.substring(0, eq))) {
                found.add(w.substring(eq + 1));
            } else if (eq < 0 && carriesSecret(w) && takesValue(argv, i)) {
                found.add(argv.get(++i));
            }
        }
        return found;
    }

    // A flag followed by another flag has no value of its own (a switch such as --no-token).
    private static boolean takesValue(List<String> argv, int i) {
        return i + 1 < argv.size() && !argv.get(i + 1).startsWith("--");
    }
}
