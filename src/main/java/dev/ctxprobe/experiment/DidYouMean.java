package dev.ctxprobe.experiment;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * The known word closest to a mistyped one, as the command line suggests commands and options: {@code "did you mean
 * 'vllm'?"} for {@code vlm}. Only a near miss is suggested (an edit distance of at most a third of the word, at
 * least 1 and at most 3); a word far from all is left without one rather than given a wrong guess.
 */
final class DidYouMean {
    private DidYouMean() {}

    /** {@code "; did you mean 'x'?"} for the closest known word, or an empty string. */
    static String hint(String typed, Collection<String> known) {
        return closest(typed, known).map(w -> "; did you mean '" + w + "'?").orElse("");
    }

    static Optional<String> closest(String typed, Collection<String> known) {
        String t = typed.toLowerCase(Locale.ROOT).replace('-', '_');
        int allowed = Math.min(3, Math.max(1, t.length() / 3));
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(t, k.toLowerCase(Locale.ROOT).replace('-', '_'));
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= allowed ? Optional.of(best) : Optional.empty();
    }

    /** Levenshtein distance, with a swap of two neighbours counted as one edit. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
