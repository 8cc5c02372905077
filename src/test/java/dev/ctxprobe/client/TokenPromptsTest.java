package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class TokenPromptsTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static List<Integer> ids(JsonNode body) {
        List<Integer> ids = new ArrayList<>();
        body.get("prompt").forEach(id -> ids.add(id.asInt()));
        return ids;
    }

    @Test
    void bodyIsTheRequestTheSpecAsksFor() {
        JsonNode body = JSON.readTree(TokenPrompts.body("deepseek-ai/DeepSeek-V4", 100, 7, TokenRange.DEFAULT, 3));

        assertThat(body.get("model").asString()).isEqualTo("deepseek-ai/DeepSeek-V4");
        assertThat(body.get("max_tokens").asInt()).isEqualTo(7);
        assertThat(body.get("stream").asBoolean()).isTrue();
        assertThat(body.get("stream_options").get("include_usage").asBoolean()).isTrue();
        assertThat(body.get("ignore_eos").asBoolean()).isTrue();
        assertThat(body.get("temperature").asInt()).isZero();
        assertThat(body.get("temperature").isIntegralNumber()).isTrue();
        assertThat(ids(body)).hasSize(100).allMatch(id -> TokenRange.DEFAULT.contains(id));
    }

    @Test
    void everyLengthIsExactIncludingTheSmallest() {
        for (long len : new long[] {1, 2, 3, 4, 999, 4096}) {
            JsonNode body = JSON.readTree(TokenPrompts.body("m", len, 1, TokenRange.EMBEDDED, 5));
            assertThat(body.get("prompt").size()).as("length %d", len).isEqualTo((int) len);
            assertThat(ids(body)).allMatch(id -> TokenRange.EMBEDDED.contains(id));
        }
    }

    @Test
    void requestsDifferWithinTheirFirstIdsAndRepeatExactly() {
        Set<List<Integer>> prefixes = new HashSet<>();
        for (long key = 0; key < 600; key++) {
            List<Integer> ids = ids(JSON.readTree(TokenPrompts.body("m", 64, 1, TokenRange.EMBEDDED, key)));
            prefixes.add(ids.subList(0, 3));
        }
        assertThat(prefixes).hasSize(600);
        assertThat(TokenPrompts.body("m", 64, 1, TokenRange.DEFAULT, 9))
                .isEqualTo(TokenPrompts.body("m", 64, 1, TokenRange.DEFAULT, 9));
    }

    @Test
    void idsStayInsideTheVocabularyTheServerNamedAndRequestsStillDiffer() {
        // ctxprobe's own GGUF models have a byte vocabulary of 260 ids; the default range lies wholly outside it.
        TokenRange bytes = TokenRange.forVocabulary(260);
        assertThat(bytes.lo()).isGreaterThanOrEqualTo(3);
        assertThat(bytes.hi()).isLessThanOrEqualTo(259);
        Set<List<Integer>> prefixes = new HashSet<>();
        for (long key = 0; key < 1000; key++) {
            List<Integer> ids = ids(JSON.readTree(TokenPrompts.body("m", 512, 1, bytes, key)));
            assertThat(ids).allMatch(bytes::contains);
            prefixes.add(ids.subList(0, 3));
        }
        assertThat(prefixes).hasSize(1000);
        assertThat(TokenRange.forVocabulary(151_936)).isEqualTo(TokenRange.DEFAULT);
        assertThat(TokenRange.forVocabulary(8000)).isEqualTo(new TokenRange(1000, 7500));
    }

    @Test
    void modelNameIsEscaped() {
        JsonNode body = JSON.readTree(TokenPrompts.body("a\"b\\c\u00e9", 2, 1, TokenRange.DEFAULT, 0));

        assertThat(body.get("model").asString()).isEqualTo("a\"b\\c\u00e9");
    }

    @Test
    void millionTokenBodyIsCompactAndParses() {
        byte[] bytes = TokenPrompts.body("m", 1_000_000, 1, TokenRange.DEFAULT, 1);

        // Ids in [1000, 30000) are 4 or 5 digits plus a comma: no more than 6 bytes per token.
        assertThat(bytes.length).isBetween(5_000_000, 6_000_200);
        assertThat(JSON.readTree(bytes).get("prompt").size()).isEqualTo(1_000_000);
    }

    @Test
    void rejectsWhatCannotBeBuilt() {
        assertThatThrownBy(() -> TokenPrompts.body("m", 0, 1, TokenRange.DEFAULT, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TokenPrompts.body("m", 10, 1, TokenRange.EMBEDDED, 256L * 256 * 256))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not fit");
        assertThatThrownBy(() -> new TokenRange(5, 5)).isInstanceOf(IllegalArgumentException.class);
    }
}
