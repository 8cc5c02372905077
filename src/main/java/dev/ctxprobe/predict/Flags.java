package dev.ctxprobe.predict;

import java.util.List;
import java.util.Locale;

/**
 * The flags of one resolved server command. A flag's value is the word after it or what follows {@code =}; when a
 * flag is repeated the last one wins, as argparse and llama.cpp's parser do.
 */
final class Flags {
    /** A flag found: the spelling used and its value. */
    record Found(String name, String value) {}

    private final List<String> argv;
    private final String where;

    Flags(List<String> argv, String where) {
        this.argv = List.copyOf(argv);
        this.where = where;
    }

    /** The program the command runs: its first word. */
    String program() {
        return argv.isEmpty() ? "" : argv.getFirst();
    }

    /** Where the command is written, e.g. {@code backends[1].command}. */
    String where() {
        return where;
    }

    /** The last of {@code names} given a value, or null. */
    Found find(String... names) {
        Found found = null;
        for (int i = 0; i < argv.size(); i++) {
            String word = argv.get(i);
            for (String name : names) {
                if (word.equals(name) && i + 1 < argv.size()) {
                    found = new Found(name, argv.get(i + 1));
                } else if (word.startsWith(name + "=")) {
                    found = new Found(name, word.substring(name.length() + 1));
                }
            }
        }
        return found;
    }

    /** The last of {@code on} or {@code off} present: true, false, or null when neither is. */
    Boolean toggle(List<String> on, List<String> off) {
        Boolean state = null;
        for (String word : argv) {
            if (on.contains(word)) {
                state = true;
            } else if (off.contains(word)) {
                state = false;
            }
        }
        return state;
    }

    /**
     * A whole number as engines write them: {@code 32768}, or with vLLM's suffixes ({@code 32k} = 32,000,
     * {@code 32K} = 32,768, likewise m/M and g/G); null when it is not one.
     */
    static Long number(String text) {
        String t = text.strip();
        if (t.isEmpty()) {
            return null;
        }
        char last = t.charAt(t.length() - 1);
        long multiplier = 1;
        int idx = "kmg".indexOf(last);
        int bin = "KMG".indexOf(last);
        if (idx >= 0) {
            multiplier = (long) Math.pow(1000, idx + 1);
            t = t.substring(0, t.length() - 1);
        } else if (bin >= 0) {
            multiplier = 1L << (10 * (bin + 1));
            t = t.substring(0, t.length() - 1);
        }
        try {
            if (t.contains(".")) {
                return Math.round(Double.parseDouble(t) * multiplier);
            }
            return Math.multiplyExact(Long.parseLong(t), multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            return null;
        }
    }

    static Double decimal(String text) {
        try {
            return Double.parseDouble(text.strip());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    static String lower(String text) {
        return text.strip().toLowerCase(Locale.ROOT);
    }
}
