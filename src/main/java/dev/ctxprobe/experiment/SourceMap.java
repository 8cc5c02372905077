package dev.ctxprobe.experiment;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.ObjectMapper;

/**
 * Where each value of a YAML document starts, keyed by its path ({@code backends[1].port}), so that checks
 * made after binding can still point at a line and column.
 */
final class SourceMap {
    /** A 1-based position in the file. */
    record Position(int line, int column) {}

    /**
     * What a value is, in the words of a YAML file's author.
     *
     * @param text the scalar as written, or null for a list, a mapping or an empty value
     */
    record Found(JsonToken token, String text) {
        /** For a message: "the text 'lots'", "the number 1.5", "a list". */
        String describe() {
            return switch (token) {
                case VALUE_STRING -> "the text '" + text + "'";
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "the number " + text;
                case VALUE_TRUE, VALUE_FALSE -> text;
                case START_ARRAY -> "a list";
                case START_OBJECT -> "a mapping";
                default -> "an empty value";
            };
        }

        /** A string whose text would have been another kind of value without quotes. */
        boolean quoted() {
            return token == JsonToken.VALUE_STRING;
        }
    }

    private final Map<String, Position> positions;
    private final Map<String, Position> keys;
    private final Map<String, Found> values;

    private SourceMap(Map<String, Position> positions, Map<String, Position> keys, Map<String, Found> values) {
        this.positions = positions;
        this.keys = keys;
        this.values = values;
    }

    /** The value written at {@code path}, or null when there is none. */
    Found found(String path) {
        return values.get(path);
    }

    /** The position of the key that names {@code path}, or of its value when the key is not known. */
    Position keyOf(String path) {
        Position p = keys.get(path);
        return p != null ? p : at(path);
    }

    static SourceMap of(ObjectMapper mapper, String text) {
        Map<String, Position> positions = new HashMap<>();
        Map<String, Position> keys = new HashMap<>();
        Map<String, Found> values = new HashMap<>();
        Deque<Frame> stack = new ArrayDeque<>();
        try (JsonParser p = mapper.createParser(text)) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.PROPERTY_NAME) {
                    stack.peek().key = p.currentName();
                    TokenStreamLocation loc = p.currentTokenLocation();
                    keys.putIfAbsent(stack.peek().childPath(), new Position(loc.getLineNr(), loc.getColumnNr()));
                    continue;
                }
                if (t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                    stack.pop();
                    continue;
                }
                String path = stack.isEmpty() ? "" : stack.peek().childPath();
                TokenStreamLocation loc = p.currentTokenLocation();
                positions.putIfAbsent(path, new Position(loc.getLineNr(), loc.getColumnNr()));
                values.putIfAbsent(path, new Found(t, t.isScalarValue() ? p.getString() : null));
                if (!stack.isEmpty() && stack.peek().array) {
                    stack.peek().index++;
                }
                if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                    stack.push(new Frame(path, t == JsonToken.START_ARRAY));
                }
            }
        } catch (StreamConstraintsException tooLong) {
            // The parser's limit says what, not where; the parser's position does.
            throw tooLong.getLocation() != null
                    ? tooLong
                    : new StreamConstraintsException(tooLong.getOriginalMessage(), where(mapper, text));
        }
        return new SourceMap(positions, keys, values);
    }

    // Where the parser stopped on a value over its limits: the token it was reading.
    private static TokenStreamLocation where(ObjectMapper mapper, String text) {
        try (JsonParser p = mapper.createParser(text)) {
            try {
                while (p.nextToken() != null) {
                    if (p.currentToken().isScalarValue()) {
                        p.getString();
                    }
                }
            } catch (StreamConstraintsException e) {
                return p.currentTokenLocation();
            }
        }
        return null;
    }

    /** The position of the value at {@code path}, or of its nearest enclosing value that has one. */
    Position at(String path) {
        String p = path;
        while (true) {
            Position pos = positions.get(p);
            if (pos != null || p.isEmpty()) {
                return pos == null ? new Position(1, 1) : pos;
            }
            int cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
            p = cut < 0 ? "" : p.substring(0, cut);
        }
    }

    private static final class Frame {
        final String path;
        final boolean array;
        String key;
        int index;

        Frame(String path, boolean array) {
            this.path = path;
            this.array = array;
        }

        String childPath() {
            if (array) {
                return path + "[" + index + "]";
            }
            return path.isEmpty() ? key : path + "." + key;
        }
    }
}
