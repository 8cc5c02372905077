package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 14, failure 11: numbers beyond any sensible range, hosts that are not hosts, tags the binder drops and
 * YAML's null words are refused with file:line:column, before anything runs; and the keys that bound and mask
 * (limits, secrets, pass_env) are read.
 */
class ExperimentChecksTest {
    private static final Path FILE = Path.of("exp.yaml");
    private final ExperimentLoader loader = new ExperimentLoader(Set.of("vllm", "openai"), ExperimentLoader.LOCAL_ONLY);

    private static final String GOOD = """
            experiment: t1
            model: /m
            vars:
              ep: 8
            load: {output_len: 1, num_prompts: 1, max_concurrency: 1}
            timeouts: {startup_s: 600}
            sweep:
              strategy: list
              targets: [1024, 2048]
            backends:
              - name: a
                engine: vllm
                host: 127.0.0.1
                command: vllm serve {model} --ep-size {ep} --max-model-len {max_model_len} --port {port}
            """;

    /** A replacement in GOOD, the line and column of the refusal, and words it must say. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '"',
            value = {
                "max_concurrency: 1|max_concurrency: 100000000|5|56|load.max_concurrency is at most 10,000",
                "max_concurrency: 1|max_concurrency: 1e8|5|56|max_concurrency",
                "num_prompts: 1|num_prompts: 2000000000|5|36|load.num_prompts is at most 100,000",
                "output_len: 1|output_len: 2000000|5|20|load.output_len is at most 1,048,576",
                "startup_s: 600|startup_s: 1e300|6|23|timeouts.startup_s is at most 604800 seconds",
                "startup_s: 600|startup_s: 600, request_s: 1e9|6|39|timeouts.request_s is at most",
                "max_concurrency: 1|max_concurrency: 1, request_rate: 1e9|5|73|load.request_rate is at most",
                "host: 127.0.0.1|host: '; rm -rf /'|13|11|is not a hostname or an IP address",
                "host: 127.0.0.1|host: '[::1]'|13|11|without brackets",
                "host: 127.0.0.1|host: 300.1.1.1|13|11|each part is 0 to 255",
                "host: 127.0.0.1|host: '1:2:3'|13|11|is not an IPv6 address",
                "ep: 8|ep: ~|4|7|'~' is YAML for no value",
                "ep: 8|ep: NULL|4|7|'NULL' is YAML for no value",
                "model: /m|model: !custom /m|2|8|the YAML tag '!custom' means nothing",
                "model: /m|model: /m\\nsecrets: [MY KEY]|3|11|secrets lists environment variable names",
                "model: /m|model: /m\\npass_env: ['*']|3|12|pass_env lists environment variable names or prefixes",
                "model: /m|model: /m\\nsecret_flags: ['--auth=x']|3|16|secret_flags lists flags whose values are secret",
                "model: /m|model: /m\\nlimits: {response_mib: 0}|3|24|limits.response_mib is 1 to 65,536",
                "model: /m|model: /m\\nlimits: {server_log_mib: 99999999}|3|26|limits.server_log_mib is 1 to",
            })
    void refusesWithItsPosition(String from, String to, int line, int column, String words) {
        String text = GOOD.replace(from, to.replace("\\n", "\n"));
        assertThat(text).isNotEqualTo(GOOD);
        ExperimentError e = catchThrowableOfType(ExperimentError.class, () -> loader.parse(FILE, text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.getMessage()).contains(words);
        assertThat(e.line()).as(e.getMessage()).isEqualTo(line);
        assertThat(e.column()).as(e.getMessage()).isEqualTo(column);
    }

    @Test
    void namesTheFileSystemCannotHoldAreRefused() throws ExperimentError {
        String longest = "b".repeat(ValueChecks.BACKEND_NAME_MAX);
        assertThat(loader.parse(FILE, GOOD.replace("- name: a", "- name: " + longest))
                        .backends()
                        .getFirst()
                        .name())
                .hasSize(ValueChecks.BACKEND_NAME_MAX);
        ExperimentError backend = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(FILE, GOOD.replace("- name: a", "- name: " + "b".repeat(300))));
        assertThat(backend.getMessage()).contains("the backend name is 300 characters long", "at most 255 bytes");
        assertThat(backend.line()).isEqualTo(11);
        ExperimentError experiment = catchThrowableOfType(
                ExperimentError.class,
                () -> loader.parse(FILE, GOOD.replace("experiment: t1", "experiment: " + "e".repeat(300))));
        assertThat(experiment.getMessage()).contains("the experiment name is 300 characters long");
        assertThat(experiment.line()).isEqualTo(1);
        assertThat(ValueChecks.BACKEND_NAME_MAX + "_ctx_2147483647_n10000.999.sbatch.sh".length())
                .isEqualTo(255);
    }

    @Test
    void quotedNullWordsAndCoreTagsAreValues() throws ExperimentError {
        Experiment e = loader.parse(FILE, GOOD.replace("ep: 8", "ep: \"~\"").replace("model: /m", "model: !!str /m"));
        assertThat(e.backends().getFirst().vars()).containsEntry("ep", "~");
        assertThat(e.model()).isEqualTo("/m");
    }

    @Test
    void ipLiteralsAndHostnamesAreHosts() throws ExperimentError {
        for (String host : new String[] {
            "\"::1\"",
            "\"::\"",
            "0.0.0.0",
            "gpu-node-3.cluster.local",
            "\"fe80::1%eth0\"",
            "\"::ffff:10.0.0.1\"",
            "localhost"
        }) {
            Experiment e = loader.parse(FILE, GOOD.replace("host: 127.0.0.1", "host: " + host));
            assertThat(e.backends().getFirst().host()).isEqualTo(host.replace("\"", ""));
        }
    }

    @Test
    void readsLimitsSecretsAndPassEnv() throws ExperimentError {
        Experiment e = loader.parse(
                FILE,
                GOOD.replace(
                        "model: /m",
                        "model: /m\nsecrets: [MY_KEY]\npass_env: [SLURM_*, MY_VAR]\n"
                                + "limits: {response_mib: 64, event_kib: 256, server_log_mib: 8}"));
        assertThat(e.secrets()).containsExactly("MY_KEY");
        assertThat(e.passEnv()).containsExactly("SLURM_*", "MY_VAR");
        assertThat(e.limits()).isEqualTo(new Experiment.Limits(64L, 256L, 8));
        assertThat(e.limits().serverLogBytes()).isEqualTo(8L << 20);

        Experiment defaults = loader.parse(FILE, GOOD);
        assertThat(defaults.limits()).isEqualTo(Experiment.Limits.DEFAULT);
        assertThat(defaults.secrets()).isEmpty();
        assertThat(defaults.passEnv()).isEmpty();
    }

    @Test
    void secretNamesIncludeEveryApiKeyEnv() throws ExperimentError {
        Experiment e = loader.parse(
                FILE, GOOD.replace("model: /m", "model: /m\nsecrets: [MY_KEY]") + "    api_key_env: VLLM_KEY_VAR\n");
        assertThat(e.secretNames()).containsExactly("MY_KEY", "VLLM_KEY_VAR");
    }
}
