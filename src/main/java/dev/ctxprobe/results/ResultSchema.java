package dev.ctxprobe.results;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.ctxprobe.metrics.StepMetrics;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.PropertyNamingStrategies;

/**
 * The types a results file must hold to be read into the result model, taken from the model's records themselves
 * (their components, the keys they are written under and their Java types), so the check cannot drift from what
 * the writer writes. Unknown keys pass: a newer ctxprobe may add some.
 *
 * <p>A key may be absent where the model can say "absent" (a boxed number, a string, an object, a list): a seed
 * lacks every key ctxprobe added. It is required where the model has no absent value (a primitive: {@code
 * target_len}, {@code success}, the seeds' metrics) and where {@link #REQUIRED} says so: what every step, every
 * metrics object and every server ending has, and what a report or a resumed run cannot do without.
 */
final class ResultSchema {

    /** Components that must be present although their type could hold null. */
    private static final Map<Class<?>, Set<String>> REQUIRED = Map.of(
            ResultDocument.class, Set.of("metadata", "scenarios"),
            Scenario.class, Set.of("backend"),
            StepMetrics.class, Set.of("e2eMs", "ttftMs", "tpotMs", "itlMs"),
            Ended.class, Set.of("reason"));

    /** The strings Jackson writes for the numbers JSON cannot hold. */
    private static final Set<String> NON_FINITE = Set.of("NaN", "Infinity", "-Infinity");

    private ResultSchema() {}

    /** Adds a problem for every value of {@code root} that does not fit the model, as {@code path: what}. */
    static void check(JsonNode root, Problems problems) {
        value(root, ResultDocument.class, "", problems);
    }

    /** The key a component is written under: {@code @JsonProperty}, else its name in snake case. */
    static String key(RecordComponent c) {
        JsonProperty named = c.getAccessor().getAnnotation(JsonProperty.class);
        if (named != null && !named.value().isEmpty()) {
            return named.value();
        }
        return PropertyNamingStrategies.SNAKE_CASE.nameForField(null, null, c.getName());
    }

    private static List<String> keysRead(RecordComponent c) {
        List<String> keys = new ArrayList<>(List.of(key(c)));
        JsonAlias alias = c.getAccessor().getAnnotation(JsonAlias.class);
        if (alias != null) {
            keys.addAll(List.of(alias.value()));
        }
        return keys;
    }

    private static void value(JsonNode v, Type type, String path, Problems problems) {
        Class<?> raw = raw(type);
        if (raw == Object.class) {
            return;
        }
        String wrong = null;
        if (raw == String.class) {
            wrong = v.isString() ? null : expected(raw, v);
        } else if (raw == boolean.class || raw == Boolean.class) {
            wrong = v.isBoolean() ? null : expected(raw, v);
        } else if (raw == long.class || raw == Long.class || raw == int.class || raw == Integer.class) {
            wrong = integer(v, raw);
        } else if (raw == double.class || raw == Double.class) {
            wrong = v.isNumber() || (v.isString() && NON_FINITE.contains(v.stringValue())) ? null : expected(raw, v);
        } else if (raw == Outcome.class) {
            wrong = outcome(v);
        } else if (raw.isEnum()) {
            wrong = enumValue(v, raw);
        } else if (List.class.isAssignableFrom(raw)) {
            list(v, argument(type, 0), path, problems);
        } else if (Map.class.isAssignableFrom(raw)) {
            map(v, argument(type, 1), path, problems);
        } else if (raw.isRecord()) {
            record(v, raw, path, problems);
        } else {
            throw new IllegalStateException("the result model holds a type the reader cannot check: " + raw);
        }
        if (wrong != null) {
            problems.add(path, wrong);
        }
    }

    private static void record(JsonNode v, Class<?> type, String path, Problems problems) {
        if (!v.isObject()) {
            problems.add(path, expected(type, v));
            return;
        }
        Set<String> required = REQUIRED.getOrDefault(type, Set.of());
        for (RecordComponent c : type.getRecordComponents()) {
            String key = key(c);
            JsonNode found = null;
            for (String k : keysRead(c)) {
                if (v.has(k)) {
                    key = k;
                    found = v.get(k);
                    break;
                }
            }
            String at = join(path, key);
            if (found == null || found.isNull()) {
                if (c.getType().isPrimitive() || required.contains(c.getName())) {
                    problems.add(at, (found == null ? "missing" : "null") + "; expected " + expectation(c.getType()));
                }
                continue;
            }
            value(found, c.getGenericType(), at, problems);
        }
    }

    private static void list(JsonNode v, Type element, String path, Problems problems) {
        if (!v.isArray()) {
            problems.add(path, "expected an array, found " + kind(v));
            return;
        }
        for (int i = 0; i < v.size(); i++) {
            String at = path + "[" + i + "]";
            if (v.get(i).isNull()) {
                problems.add(at, "null; expected " + expectation(raw(element)));
            } else {
                value(v.get(i), element, at, problems);
            }
        }
    }

    private static void map(JsonNode v, Type valueType, String path, Problems problems) {
        if (!v.isObject()) {
            problems.add(path, "expected an object, found " + kind(v));
            return;
        }
        if (raw(valueType) == Object.class) {
            return;
        }
        for (Map.Entry<String, JsonNode> e : v.properties()) {
            String at = join(path, e.getKey());
            if (e.getValue().isNull()) {
                problems.add(at, "null; expected " + expectation(raw(valueType)));
            } else {
                value(e.getValue(), valueType, at, problems);
            }
        }
    }

    private static String integer(JsonNode v, Class<?> type) {
        boolean isInt = type == int.class || type == Integer.class;
        if (v.isIntegralNumber()) {
            if (!v.canConvertToLong() || (isInt && !v.canConvertToInt())) {
                return v + " is too large";
            }
            return null;
        }
        if (v.isFloatingPointNumber() && v.doubleValue() == Math.rint(v.doubleValue())) {
            double d = v.doubleValue();
            return Math.abs(d) < (isInt ? Integer.MAX_VALUE : 9.0e18) ? null : v + " is too large";
        }
        return expected(type, v);
    }

    private static String outcome(JsonNode v) {
        if (!v.isString()) {
            return expected(String.class, v);
        }
        try {
            Outcome.of(v.stringValue());
            return null;
        } catch (IllegalArgumentException e) {
            return "unknown outcome " + quoted(v.stringValue()) + "; expected ok, skipped, failed or a failure class ("
                    + Arrays.stream(FailureClass.values()).map(FailureClass::id).collect(Collectors.joining(", "))
                    + ")";
        }
    }

    private static String enumValue(JsonNode v, Class<?> type) {
        List<String> ids = ids(type);
        if (v.isString() && ids.contains(v.stringValue())) {
            return null;
        }
        return (v.isString() ? "unknown value " + quoted(v.stringValue()) : "expected a string, found " + kind(v))
                + "; expected one of " + String.join(", ", ids);
    }

    /** The words an enum is written as: its {@code @JsonValue} method's, else its constants' names. */
    private static List<String> ids(Class<?> type) {
        Method id = Arrays.stream(type.getMethods())
                .filter(m -> m.isAnnotationPresent(JsonValue.class))
                .findFirst()
                .orElse(null);
        List<String> out = new ArrayList<>();
        for (Object constant : type.getEnumConstants()) {
            try {
                out.add(id == null ? ((Enum<?>) constant).name() : String.valueOf(id.invoke(constant)));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot name the values of " + type, e);
            }
        }
        return out;
    }

    private static String expected(Class<?> type, JsonNode found) {
        return "expected " + expectation(type) + ", found " + kind(found);
    }

    private static String expectation(Class<?> type) {
        if (type == String.class || type == Outcome.class || type.isEnum()) {
            return "a string";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == long.class || type == Long.class || type == int.class || type == Integer.class) {
            return "an integer";
        }
        if (type == double.class || type == Double.class) {
            return "a number";
        }
        if (List.class.isAssignableFrom(type)) {
            return "an array";
        }
        return "an object";
    }

    /** What a value is, for a message: {@code an object}, {@code the string "lots"}, {@code 12.5}. */
    static String kind(JsonNode v) {
        if (v.isObject()) {
            return "an object";
        }
        if (v.isArray()) {
            return "an array";
        }
        if (v.isString()) {
            return "the string " + quoted(v.stringValue());
        }
        return v.toString();
    }

    private static String quoted(String s) {
        String shown = s.length() > 40 ? s.substring(0, 40) + "..." : s;
        StringBuilder out = new StringBuilder("\"");
        shown.codePoints().forEach(cp -> {
            if (Character.isISOControl(cp)) {
                out.append(String.format(java.util.Locale.ROOT, "\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.append('"').toString();
    }

    static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private static Class<?> raw(Type type) {
        if (type instanceof Class<?> c) {
            return c;
        }
        if (type instanceof ParameterizedType p) {
            return (Class<?>) p.getRawType();
        }
        throw new IllegalStateException("the result model holds a type the reader cannot check: " + type);
    }

    private static Type argument(Type type, int index) {
        if (type instanceof ParameterizedType p) {
            return p.getActualTypeArguments()[index];
        }
        return Object.class;
    }
}
