package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.results.HintKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EngineProfilesTest {

    @Test
    void knowsEveryEngineOfTheSpec() {
        assertThat(EngineProfiles.names())
                .containsExactly(
                        "vllm",
                        "sglang",
                        "sglang-kunlun",
                        "llamacpp",
                        "trtllm",
                        "lmdeploy",
                        "tgi",
                        "embedded",
                        "openai");
    }

    @Test
    void unknownNameListsTheKnownOnes() {
        assertThatThrownBy(() -> EngineProfiles.get("vlm"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'vlm'")
                .hasMessageContaining("vllm, sglang, sglang-kunlun, llamacpp");
    }

    @ParameterizedTest
    @CsvSource({
        // name,          launches, readiness,   hint kind,     token lo, token hi, empty answer = too long
        "vllm,            true,     /health,     MAX_MODEL_LEN, 1000,     30000,    false",
        "sglang,          true,     /health,     PROMPT_LEN,    1000,     30000,    false",
        "sglang-kunlun,   true,     /health,     PROMPT_LEN,    1000,     30000,    false",
        "llamacpp,        true,     /health,     PROMPT_LEN,    1000,     30000,    false",
        "trtllm,          true,     /health,     MAX_MODEL_LEN, 1000,     30000,    false",
        "lmdeploy,        true,     /v1/models,  MAX_MODEL_LEN, 1000,     30000,    true",
        "tgi,             true,     /health,     PROMPT_LEN,    1000,     30000,    false",
        "embedded,        true,     /health,     MAX_MODEL_LEN, 3,        259,      false",
        "openai,          false,    /v1/models,  MAX_MODEL_LEN, 1000,     30000,    false",
    })
    void profileData(
            String name,
            boolean launches,
            String readiness,
            HintKind hintKind,
            int lo,
            int hi,
            boolean emptyAnswerMeansTooLong) {
        EngineProfile p = EngineProfiles.get(name);
        assertThat(p.name()).isEqualTo(name);
        assertThat(p.launchesServer()).isEqualTo(launches);
        assertThat(p.readinessPath()).isEqualTo(readiness);
        assertThat(p.hintKind()).isEqualTo(hintKind);
        assertThat(p.tokenRange()).isEqualTo(new TokenRange(lo, hi));
        assertThat(p.emptyAnswerMeansTooLong()).isEqualTo(emptyAnswerMeansTooLong);
    }

    @ParameterizedTest
    @CsvSource({
        "vllm,          65536, 65535",
        "sglang,        65536, 65529",
        "sglang-kunlun, 66560, 66553",
        "llamacpp,      40960, 40959",
        "llamacpp,      40961, 40960",
        "embedded,      40192, 40191",
        "embedded,      40100, 40127",
        "trtllm,        65536, 65535",
        "tgi,           4096,  4095",
        "lmdeploy,      4096,  4095",
        "openai,        4096,  4095",
    })
    void largestPromptWithOneOutputToken(String name, long maxModelLen, long largest) {
        assertThat(EngineProfiles.get(name).largestPrompt(maxModelLen)).isEqualTo(largest);
    }

    @Test
    void largestPromptRefusesANonPositiveLimit() {
        assertThatThrownBy(() -> EngineProfiles.get("vllm").largestPrompt(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0");
    }

    @Test
    void tokenRangeRejectsAnEmptyRange() {
        assertThatThrownBy(() -> new TokenRange(5, 5)).isInstanceOf(IllegalArgumentException.class);
    }
}
