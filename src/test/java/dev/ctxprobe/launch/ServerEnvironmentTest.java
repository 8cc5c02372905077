package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerEnvironmentTest {
    @Test
    void aServerGetsTheAllowListThePassedNamesTheExperimentsEnvAndTheMark() {
        Map<String, String> own = Map.of(
                "PATH", "/usr/bin",
                "CUDA_VISIBLE_DEVICES", "0,1",
                "HF_HOME", "/cache",
                "LC_ALL", "C.UTF-8",
                "AWS_SECRET_ACCESS_KEY", "not-for-servers",
                "SLURM_JOB_ID", "42",
                "MY_TOOL_FLAG", "1");

        Map<String, String> env = ServerEnvironment.of(
                own, List.of("SLURM_*"), Map.of("VLLM_LOGGING_LEVEL", "DEBUG", "PATH", "/opt"), "m1");

        assertThat(env)
                .containsEntry("PATH", "/opt")
                .containsEntry("CUDA_VISIBLE_DEVICES", "0,1")
                .containsEntry("HF_HOME", "/cache")
                .containsEntry("LC_ALL", "C.UTF-8")
                .containsEntry("SLURM_JOB_ID", "42")
                .containsEntry("VLLM_LOGGING_LEVEL", "DEBUG")
                .containsEntry(LaunchProcesses.MARK_VARIABLE, "m1")
                .doesNotContainKeys("AWS_SECRET_ACCESS_KEY", "MY_TOOL_FLAG");
    }

    @Test
    void theExperimentCannotOverrideTheMark() {
        Map<String, String> env =
                ServerEnvironment.of(Map.of(), List.of(), Map.of(LaunchProcesses.MARK_VARIABLE, "forged"), "real");
        assertThat(env).containsEntry(LaunchProcesses.MARK_VARIABLE, "real");
    }
}
