package dev.ctxprobe.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SecretFlagsTest {
    @Test
    void valuesOfSecretFlagsAreMaskedInBothForms() {
        List<String> argv = List.of(
                "vllm",
                "serve",
                "m",
                "--api-key",
                "sk-1",
                "--HF_TOKEN=hf-2",
                "--ssl-key",
                "k.pem",
                "--port",
                "8000",
                "--db-password",
                "pw",
                "--client-secret=s",
                "--no-token",
                "--max-model-len",
                "1024");
        SecretFlags flags = SecretFlags.DEFAULT;
        assertThat(String.join(" ", flags.shown(argv)))
                .isEqualTo("vllm serve m --api-key <masked> --HF_TOKEN=<masked> --ssl-key <masked> --port 8000"
                        + " --db-password <masked> --client-secret=<masked> --no-token --max-model-len 1024");
        assertThat(flags.values(argv)).containsExactly("sk-1", "hf-2", "k.pem", "pw", "s");
    }

    @Test
    void anExperimentAddsItsOwnFlags() {
        List<String> argv = List.of("server", "--auth", "abc", "-p", "x", "--auth-header=Bearer y");
        assertThat(SecretFlags.DEFAULT.shown(argv)).isEqualTo(argv);
        assertThat(SecretFlags.of(List.of("--auth", "-p", "--auth-header")).shown(argv))
                .containsExactly("server", "--auth", "<masked>", "-p", "<masked>", "--auth-header=<masked>");
    }
}
