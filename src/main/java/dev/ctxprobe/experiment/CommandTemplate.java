package dev.ctxprobe.experiment;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server command template: split into words the way a POSIX shell splits them (quotes and backslashes
 * respected) before any substitution, so that a substituted value is always one argument or part of one and
 * nothing ever passes through a shell (docs/experiment-file.md#how-a-command-is-split-into-arguments).
 *
 * <p>Placeholders are {@code {name}} with a name of letters, digits and underscores, or {@code {env:NAME}} for the
 * value of a variable of ctxprobe's environment (docs/experiment-file.md#secrets); {@code {{} and
 * {@code }}} write literal braces. Other braces (JSON in an argument) are left as they are.
 */
public final class CommandTemplate {
    private static final Pattern TOKEN = Pattern.compile("\\{\\{|}}|\\{((?:env:)?[A-Za-z_][A-Za-z0-9_]*)}");

    /** How a placeholder that takes its value from ctxprobe's environment begins: {@code {env:VLLM_API_KEY}}. */
    public static final String ENV = "env:";

    private final List<String> words;

    private CommandTemplate(List<String> words) {
        this.words = List.copyOf(words);
    }

    /** Splits a command; throws {@link IllegalArgumentException} for an unclosed quote or a trailing backslash. */
    public static CommandTemplate parse(String command) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        int i = 0;
        while (i < command.length()) {
            char c = command.charAt(i);
            if (c == '\'') {
                int end = command.indexOf('\'', i + 1);
                if (end < 0) {
                    throw new IllegalArgumentException("the single quote at character " + (i + 1) + " is never closed");
                }
                word.append(command, i + 1, end);
                inWord = true;
                i = end + 1;
            } else if (c == '"') {
                i = readDoubleQuoted(command, i, word);
                inWord = true;
            } else if (c == '\\') {
                if (i + 1 >= command.length()) {
                    throw new IllegalArgumentException("the command ends with a backslash that escapes nothing");
                }
                if (command.charAt(i + 1) != '\n') {
                    word.append(command.charAt(i + 1));
                    inWord = true;
                }
                i += 2;
            } else if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(word.toString());
                    word.setLength(0);
                    inWord = false;
                }
                i++;
            } else {
                word.append(c);
                inWord = true;
                i++;
            }
        }
        if (inWord) {
            words.add(word.toString());
        }
        if (words.isEmpty()) {
            throw new IllegalArgumentException("the command is empty");
        }
        return new CommandTemplate(words);
    }

    private static int readDoubleQuoted(String command, int open, StringBuilder word) {
        int i = open + 1;
        while (i < command.length()) {
            char c = command.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\' && i + 1 < command.length() && "\"\\$`\n".indexOf(command.charAt(i + 1)) >= 0) {
                if (command.charAt(i + 1) != '\n') {
                    word.append(command.charAt(i + 1));
                }
                i += 2;
            } else {
                word.append(c);
                i++;
            }
        }
        throw new IllegalArgumentException("the double quote at character " + (open + 1) + " is never closed");
    }

    /** The words before substitution. */
    public List<String> words() {
        return words;
    }

    /** Every placeholder name used, in order of first use. */
    public Set<String> placeholders() {
        Set<String> names = new LinkedHashSet<>();
        for (String w : words) {
            Matcher m = TOKEN.matcher(w);
            while (m.find()) {
                if (m.group(1) != null) {
                    names.add(m.group(1));
                }
            }
        }
        return names;
    }

    /**
     * The argument vector with every placeholder replaced; a value is never split again.
     *
     * @throws IllegalArgumentException naming a placeholder without a value
     */
    public List<String> render(Map<String, String> values) {
        List<String> argv = new ArrayList<>(words.size());
        for (String w : words) {
            Matcher m = TOKEN.matcher(w);
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                String replacement;
                if (m.group(1) == null) {
                    replacement = m.group().substring(1);
                } else {
                    replacement = values.get(m.group(1));
                    if (replacement == null) {
                        throw new IllegalArgumentException("unknown placeholder {" + m.group(1) + "}");
                    }
                }
                m.appendReplacement(out, Matcher.quoteReplacement(replacement));
            }
            m.appendTail(out);
            argv.add(out.toString());
        }
        return argv;
    }
}
