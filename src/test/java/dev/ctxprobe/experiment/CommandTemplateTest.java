package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CommandTemplateTest {

    @Test
    void splitsLikeAShellBeforeSubstituting() {
        CommandTemplate t = CommandTemplate.parse(
                "vllm serve {model} --override-generation-config '{\"temperature\": 0}' --name \"my model\" a\\ b");
        assertThat(t.words())
                .containsExactly(
                        "vllm",
                        "serve",
                        "{model}",
                        "--override-generation-config",
                        "{\"temperature\": 0}",
                        "--name",
                        "my model",
                        "a b");
        assertThat(t.placeholders()).containsExactly("model");
    }

    @Test
    void aValueWithSpacesAndQuotesStaysOneArgument() {
        CommandTemplate t = CommandTemplate.parse("serve --model {model} --tp={tp}");
        List<String> argv = t.render(Map.of("model", "/m/a b; rm -rf / \"x\"", "tp", "8"));
        assertThat(argv).containsExactly("serve", "--model", "/m/a b; rm -rf / \"x\"", "--tp=8");
    }

    @Test
    void doubledBracesAreLiteral() {
        assertThat(CommandTemplate.parse("echo {{port}} {port}").render(Map.of("port", "80")))
                .containsExactly("echo", "{port}", "80");
    }

    @Test
    void unknownPlaceholderIsNamed() {
        assertThatThrownBy(() -> CommandTemplate.parse("serve {nope}").render(Map.of()))
                .hasMessageContaining("{nope}");
    }

    @Test
    void unclosedQuotesAndEmptyCommandsAreRefused() {
        assertThatThrownBy(() -> CommandTemplate.parse("serve 'oops")).hasMessageContaining("never closed");
        assertThatThrownBy(() -> CommandTemplate.parse("serve \"oops")).hasMessageContaining("never closed");
        assertThatThrownBy(() -> CommandTemplate.parse("   ")).hasMessageContaining("empty");
    }

    @Test
    void emptyQuotedWordIsKept() {
        assertThat(CommandTemplate.parse("a '' b").words()).containsExactly("a", "", "b");
    }
}
