package dev.ctxprobe.secrets;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Masks the values of secret environment variables wherever ctxprobe writes text: server logs, evidence, results,
 * reports. A variable is secret when the experiment names it ({@code secrets}, {@code api_key_env}) or when its name
 * says so ({@code *_API_KEY}, {@code *_TOKEN}, {@code *_SECRET}, {@code *_PASSWORD}, {@code HF_TOKEN}). Values
 * shorter than {@link #MIN_LENGTH} characters are left alone: masking {@code "1"} would garble every number.
 */
public final class Redactor {
    /** What a secret value is replaced by. */
    public static final String MASK = "<masked>";

    /** Shorter values are not masked; no real key is this short. */
    public static final int MIN_LENGTH = 6;

    /** Masks nothing. */
    public static final Redactor NONE = new Redactor(List.of());

    private final List<String> values;
    private final List<String> latin1Values;

    private Redactor(Collection<String> values) {
        List<String> sorted = new ArrayList<>(new LinkedHashSet<>(values));
        // The longest first, so that a value containing another is masked whole.
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        this.values = List.copyOf(sorted);
        this.latin1Values = sorted.stream()
                .map(v -> new String(v.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1))
                .toList();
    }

    /** Whether a variable's name says it holds a secret. */
    public static boolean looksSecret(String name) {
        return name.equals("HF_TOKEN")
                || name.equals("API_KEY")
                || name.endsWith("_API_KEY")
                || name.endsWith("_TOKEN")
                || name.endsWith("_SECRET")
                || name.endsWith("_PASSWORD");
    }

    /**
     * The secret values among {@code environments}: those of the {@code named} variables and of every variable whose
     * name {@linkplain #looksSecret looks secret}.
     */
    public static Redactor of(Set<String> named, List<Map<String, String>> environments) {
        List<String> found = new ArrayList<>();
        for (Map<String, String> env : environments) {
            env.forEach((k, v) -> {
                if (v != null && v.length() >= MIN_LENGTH && (named.contains(k) || looksSecret(k))) {
                    found.add(v);
                }
            });
        }
        return found.isEmpty() ? NONE : new Redactor(found);
    }

    /**
     * This redactor masking {@code more} as well: the values of {@code {env:NAME}} placeholders and of secret-carrying
     * flags ({@link SecretFlags}) in the commands.
     */
    public Redactor with(Collection<String> more) {
        List<String> found = new ArrayList<>(values);
        more.stream().filter(v -> v != null && v.length() >= MIN_LENGTH).forEach(found::add);
        return found.isEmpty() ? NONE : new Redactor(found);
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** Whether {@code text} holds a secret value. */
    public boolean finds(String text) {
        if (text == null) {
            return false;
        }
        for (String v : values) {
            if (text.contains(v)) {
                return true;
            }
        }
        return false;
    }

    /** {@code text} with every secret value replaced by {@link #MASK}; null stays null. */
    public String mask(String text) {
        if (text == null || values.isEmpty()) {
            return text;
        }
        String out = text;
        for (String v : values) {
            if (out.contains(v)) {
                out = out.replace(v, MASK);
            }
        }
        return out;
    }

    /**
     * Bytes of UTF-8 text (a log line) with every secret masked, or null when none is in them; the bytes are compared
     * as they are, so text that is not valid UTF-8 passes through unchanged.
     */
    public byte[] mask(byte[] bytes, int from, int to) {
        if (latin1Values.isEmpty()) {
            return null;
        }
        String s = new String(bytes, from, to - from, StandardCharsets.ISO_8859_1);
        String out = s;
        for (String v : latin1Values) {
            if (out.contains(v)) {
                out = out.replace(v, MASK);
            }
        }
        return out == s ? null : out.getBytes(StandardCharsets.ISO_8859_1);
    }
}
