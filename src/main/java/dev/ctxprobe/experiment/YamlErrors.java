package dev.ctxprobe.experiment;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/**
 * The YAML parser's and the binder's errors in the file's words: {@code file:line:col: what to write instead},
 * where Jackson's own messages name Java types and its settings, which say nothing to the author of a YAML file.
 */
final class YamlErrors {
    private YamlErrors() {}

    /** The error for {@code e}; {@code where} (null while the text does not parse) locates what Jackson cannot. */
    static ExperimentError translate(Path file, JacksonException e, SourceMap where, String text) {
        TokenStreamLocation loc = e.getLocation();
        int line = loc == null ? 0 : loc.getLineNr();
        int col = loc == null ? 0 : loc.getColumnNr();
        String path = pathOf(e);
        if (where != null && (line <= 0 || e instanceof UnrecognizedPropertyException)) {
            // The YAML binder does not always know where it was; the source map does, down to the key.
            SourceMap.Position p = e instanceof UnrecognizedPropertyException ? where.keyOf(path) : where.at(path);
            line = p.line();
            col = p.column();
        }
        if (e instanceof tools.jackson.core.exc.StreamConstraintsException) {
            return new ExperimentError(
                    file,
                    line,
                    col,
                    "a value here is longer than "
                            + String.format(java.util.Locale.ROOT, "%,d", ExperimentLoader.MAX_STRING_CHARS)
                            + " characters, the most one value of an experiment file may hold: shorten it");
        }
        if (e instanceof UnrecognizedPropertyException u) {
            java.util.List<String> keys = u.getKnownPropertyIds() == null
                    ? java.util.List.of()
                    : u.getKnownPropertyIds().stream()
                            .map(String::valueOf)
                            .map(YamlErrors::snake)
                            .sorted()
                            .toList();
            String inside = path.contains(".") ? " in '" + path.substring(0, path.lastIndexOf('.')) + "'" : "";
            return new ExperimentError(
                    file,
                    line,
                    col,
                    "unknown key '" + u.getPropertyName() + "'" + inside
                            + DidYouMean.hint(u.getPropertyName(), keys) + "; the keys allowed here are: "
                            + String.join(", ", keys));
        }
        if (e instanceof MismatchedInputException m) {
            return new ExperimentError(file, line, col, mismatch(path, m.getTargetType(), found(where, path)));
        }
        if (e instanceof DatabindException) {
            return new ExperimentError(file, line, col, "'" + path + "' cannot be read: " + plain(e));
        }
        if (e instanceof tools.jackson.core.exc.InputCoercionException c) {
            long limit = c.getTargetType() == Integer.class || c.getTargetType() == int.class
                    ? Integer.MAX_VALUE
                    : Long.MAX_VALUE;
            return new ExperimentError(
                    file,
                    line,
                    col,
                    "'" + path + "' is too large: write a whole number up to "
                            + String.format(Locale.ROOT, "%,d", limit));
        }
        return new ExperimentError(file, line, col, "not valid YAML: " + yamlProblem(e) + "; " + yamlHint(text, line));
    }

    /**
     * The YAML parser's own sentences without its excerpts: "expected ',' or '}', but got <stream end> (while parsing a
     * flow mapping)". Its message repeats the source with carets on indented lines; the location is given already.
     */
    private static String yamlProblem(JacksonException e) {
        List<String> said = e.getOriginalMessage() == null
                ? List.of()
                : e.getOriginalMessage()
                        .lines()
                        .filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0)))
                        .toList();
        if (said.isEmpty()) {
            return "the text cannot be read";
        }
        if (said.size() == 1) {
            return plain(said.getFirst());
        }
        return plain(said.getLast()) + " (" + plain(said.getFirst()) + ")";
    }

    // A command that starts with a placeholder is the usual mistake: YAML reads "{java} -cp" as a mapping.
    private static String yamlHint(String text, int line) {
        List<String> lines = text.lines().toList();
        for (int i = Math.max(0, line - 2); i < Math.min(lines.size(), line); i++) {
            if (lines.get(i).matches(".*:\\s*\\{[A-Za-z_]+}.*")) {
                return "a value that starts with a {placeholder} must be quoted, e.g. command: '{java} -jar x.jar'";
            }
        }
        return "check indentation and quotes";
    }

    /**
     * The sentence for a value of the wrong kind, in the file's words: what was found and what to write. Jackson's
     * own message names Java types and its coercion settings, which say nothing to the author of a YAML file.
     */
    static String mismatch(String path, Class<?> target, SourceMap.Found found) {
        String not = found == null ? "" : ", not " + found.describe();
        if (path.isEmpty()) {
            return "the file must hold keys with values (experiment:, model:, sweep:, backends:)" + not
                    + "; start from experiments/demo.yaml";
        }
        String want = target == null ? "another kind of value" : describe(target);
        if (found != null && found.quoted() && found.text() != null && looksLike(target, found.text())) {
            return "'" + path + "' must be " + want + not + ": remove the quotes";
        }
        return "'" + path + "' must be " + want + not;
    }

    private static SourceMap.Found found(SourceMap where, String path) {
        return where == null ? null : where.found(path);
    }

    private static boolean looksLike(Class<?> target, String text) {
        if (target == Integer.class || target == Long.class) {
            return text.strip().matches("-?\\d+");
        }
        if (target == Double.class) {
            return text.strip().matches("-?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");
        }
        if (target == Boolean.class) {
            return text.strip().equals("true") || text.strip().equals("false");
        }
        return false;
    }

    // Jackson's parser messages quote Java types ("out of range of `long`"); keep the first sentence without them.
    private static String plain(JacksonException e) {
        return plain(firstLine(e.getOriginalMessage()));
    }

    private static String plain(String first) {
        int type = first.indexOf(" `");
        int paren = first.indexOf(" (");
        int cut = type < 0 ? paren : paren < 0 ? type : Math.min(type, paren);
        return cut > 0 ? first.substring(0, cut) : first;
    }

    private static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }

    private static String describe(Class<?> type) {
        if (type == Integer.class || type == Long.class || type == int.class || type == long.class) {
            return "a whole number";
        }
        if (type == Double.class || type == double.class) {
            return "a number";
        }
        if (type == Boolean.class || type == boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a text value";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "a mapping of keys to values";
    }

    private static String pathOf(JacksonException e) {
        StringBuilder sb = new StringBuilder();
        for (JacksonException.Reference r : e.getPath()) {
            if (r.getPropertyName() != null) {
                if (!sb.isEmpty()) {
                    sb.append('.');
                }
                sb.append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
