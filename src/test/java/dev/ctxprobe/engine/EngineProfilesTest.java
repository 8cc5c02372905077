package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.HintKind;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class EngineProfilesTest {

    @Test
    void knowsEveryEngineOfTheSpec() {
        assertThat(Engines.names())
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

    /**
     * Every text a profile looks for is registered once: a log line that names a capacity and what the server states
     * is one rule read two ways, not two copies that can drift apart. Rules shared between profiles (the openai
     * profile's refusals) are the same objects, counted once.
     */
    @ParameterizedTest
    @MethodSource("names")
    void eachPatternIsRegisteredOnce(String name) {
        EngineProfile p = Engines.profile(name);
        Set<Pattern> patterns = Collections.newSetFromMap(new IdentityHashMap<>());
        p.capacityRules().forEach(r -> patterns.add(r.pattern()));
        p.stated().lines().forEach(l -> patterns.add(l.pattern()));
        for (EngineProfile.StartupRule r : p.startupRules()) {
            patterns.add(r.trigger());
            r.reads().forEach(read -> patterns.add(read.pattern()));
        }
        for (EngineProfile.ResponseRule r : p.responseRules()) {
            patterns.add(r.trigger());
            if (r.limit() != null) {
                patterns.add(r.limit());
            }
        }
        if (p.advice().truncationLog() != null) {
            patterns.add(p.advice().truncationLog());
        }
        List<String> texts = patterns.stream().map(Pattern::pattern).toList();
        assertThat(texts).doesNotHaveDuplicates();
    }

    static Set<String> names() {
        return Engines.names();
    }

    @Test
    void unknownNameListsTheKnownOnes() {
        assertThatThrownBy(() -> Engines.profile("vlm"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'vlm'")
                .hasMessageContaining("vllm, sglang, sglang-kunlun, llamacpp");
    }

    @ParameterizedTest
    @CsvSource({
        // name,          readiness,   hint kind,     token lo, token hi, empty answer = too long
        "vllm,            /health,     MAX_MODEL_LEN, 1000,     30000,    false",
        "sglang,          /health,     PROMPT_LEN,    1000,     30000,    false",
        "sglang-kunlun,   /health,     PROMPT_LEN,    1000,     30000,    false",
        "llamacpp,        /health,     PROMPT_LEN,    1000,     30000,    false",
        "trtllm,          /health,     MAX_MODEL_LEN, 1000,     30000,    false",
        "lmdeploy,        /v1/models,  MAX_MODEL_LEN, 1000,     30000,    true",
        "tgi,             /health,     PROMPT_LEN,    1000,     30000,    false",
        "embedded,        /health,     MAX_MODEL_LEN, 3,        259,      false",
        "openai,          /v1/models,  MAX_MODEL_LEN, 1000,     30000,    false",
    })
    void profileData(
            String name, String readiness, HintKind hintKind, int lo, int hi, boolean emptyAnswerMeansTooLong) {
        EngineProfile p = Engines.profile(name);
        assertThat(p.name()).isEqualTo(name);
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
        assertThat(Engines.profile(name).largestPrompt(maxModelLen)).isEqualTo(largest);
    }

    @Test
    void largestPromptRefusesANonPositiveLimit() {
        assertThatThrownBy(() -> Engines.profile("vllm").largestPrompt(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0");
    }

    @Test
    void tokenRangeRejectsAnEmptyRange() {
        assertThatThrownBy(() -> new TokenRange(5, 5)).isInstanceOf(IllegalArgumentException.class);
    }
}
