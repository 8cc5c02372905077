package dev.ctxprobe.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RedactorTest {
    @Test
    void namedAndSecretLookingVariablesAreMaskedOthersAreNot() {
        Redactor r = Redactor.of(
                Set.of("MY_KEY"),
                List.of(Map.of(
                        "MY_KEY", "named-value-123",
                        "OPENAI_API_KEY", "sk-abcdefghijkl",
                        "HF_TOKEN", "hf_0123456789",
                        "DB_PASSWORD", "hunter2hunter2",
                        "MODEL_PATH", "/data/models/x",
                        "SHORT_TOKEN", "12345")));
        String text =
                "key named-value-123, sk-abcdefghijkl and hf_0123456789 and hunter2hunter2 at /data/models/x 12345";
        assertThat(r.mask(text)).isEqualTo("key <masked>, <masked> and <masked> and <masked> at /data/models/x 12345");
        assertThat(r.finds(text)).isTrue();
        assertThat(r.finds("/data/models/x")).isFalse();
    }

    @Test
    void aValueInsideALongerOneIsMaskedWithIt() {
        Redactor r = Redactor.of(Set.of("A", "B"), List.of(Map.of("A", "abcdef", "B", "abcdefghij")));
        assertThat(r.mask("x abcdefghij y abcdef")).isEqualTo("x <masked> y <masked>");
    }

    @Test
    void bytesAreMaskedAsTheyAreAndLeftAloneWithoutASecret() {
        Redactor r = Redactor.of(Set.of(), List.of(Map.of("X_TOKEN", "tök-0123456")));
        byte[] line = "auth tök-0123456 ok\n".getBytes(StandardCharsets.UTF_8);
        assertThat(new String(r.mask(line, 0, line.length), StandardCharsets.UTF_8))
                .isEqualTo("auth <masked> ok\n");
        byte[] clean = "nothing here\n".getBytes(StandardCharsets.UTF_8);
        assertThat(r.mask(clean, 0, clean.length)).isNull();
        assertThat(Redactor.NONE.mask("sk-abcdefghijkl")).isEqualTo("sk-abcdefghijkl");
        assertThat(Redactor.NONE.isEmpty()).isTrue();
    }
}
