package dev.ctxprobe.experiment;

import java.nio.file.Path;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.ObjectMapper;

/**
 * What the YAML binder lets through without a word: a tag it does not know ({@code !custom value} binds as if the
 * tag were not there), and YAML's null words other than {@code null} ({@code ~}, {@code Null}, {@code NULL}), which
 * it binds as text, so that {@code ep: ~} reached a server as {@code --ep-size ~}. Both are refused where they stand.
 */
final class YamlScalars {
    /** The core schema's own tags, which mean what they say. */
    private static final Set<String> CORE_TAGS = Set.of(
            "tag:yaml.org,2002:str",
            "tag:yaml.org,2002:int",
            "tag:yaml.org,2002:float",
            "tag:yaml.org,2002:bool",
            "tag:yaml.org,2002:null",
            "tag:yaml.org,2002:map",
            "tag:yaml.org,2002:seq");

    private static final Set<String> NULL_WORDS = Set.of("~", "Null", "NULL");

    private YamlScalars() {}

    /**
     * Throws at the first unknown tag or unquoted null word of {@code text}; a document that does not parse is left
     * to the binder, which says where.
     */
    static void check(Path file, ObjectMapper mapper, String text) throws ExperimentError {
        try (JsonParser p = mapper.createParser(text)) {
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.PROPERTY_NAME || t == JsonToken.END_OBJECT || t == JsonToken.END_ARRAY) {
                    continue;
                }
                TokenStreamLocation at = p.currentTokenLocation();
                Object tag = p.canReadTypeId() ? p.getTypeId() : null;
                if (tag != null && !CORE_TAGS.contains(tag.toString())) {
                    String name = tag.toString().startsWith("tag:") ? tag.toString() : "!" + tag;
                    throw new ExperimentError(
                            file,
                            at.getLineNr(),
                            at.getColumnNr(),
                            "the YAML tag '" + name + "' means nothing to ctxprobe and would be ignored: remove it");
                }
                if (t == JsonToken.VALUE_STRING && NULL_WORDS.contains(p.getString()) && unquoted(text, at)) {
                    throw new ExperimentError(
                            file,
                            at.getLineNr(),
                            at.getColumnNr(),
                            "'" + p.getString() + "' is YAML for no value: write the value (quote it, \""
                                    + p.getString() + "\", if you mean the text), or remove the key to get its"
                                    + " default");
                }
            }
        } catch (JacksonException notYaml) {
            // The binder reports broken YAML with its position.
        }
    }

    private static boolean unquoted(String text, TokenStreamLocation at) {
        long offset = at.getCharOffset();
        return offset >= 0
                && offset < text.length()
                && text.charAt((int) offset) != '"'
                && text.charAt((int) offset) != '\'';
    }
}
