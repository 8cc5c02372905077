package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testengine.TestEngines;
import dev.ctxprobe.testsupport.Required;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Issue 14, failure 10: {@code host: "::1"} ended in startup_timeout; an IPv6 host now works end to end. */
class Ipv6IT {
    @TempDir
    Path dir;

    @Test
    void aBackendOnTheIpv6LoopbackIsLaunchedProbedAndMeasured() throws Exception {
        Required.assumePresent("ipv6", ipv6Loopback(), "this machine has no IPv6 loopback (::1) to bind");
        String yaml = "experiment: v6\n"
                + "model: test-model\n"
                + "context_pad: 100\n"
                + "vars:\n"
                + "  java: '" + TestEngines.javaBin() + "'\n"
                + "  cp: '" + TestEngines.classpath() + "'\n"
                + "load: {output_len: 1, num_prompts: 1, warmup: 1}\n"
                + "sweep: {strategy: list, targets: [1000]}\n"
                + "timeouts: {startup_s: 20, request_s: 5, shutdown_s: 2}\n"
                + "backends:\n"
                + "  - name: v6\n"
                + "    engine: vllm\n"
                + "    host: \"::1\"\n"
                + "    command: '{java} -XX:+UseSerialGC -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --host {host} --port {port} --max-model-len {max_model_len}'\n";
        Path exp = dir.resolve("v6.yaml");
        Files.writeString(exp, yaml);
        Path out = dir.resolve("out");

        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode step = FaultRuns.results(FaultRuns.runDir(out, "v6").orElseThrow())
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).as(step.toString()).isEqualTo("ok");
        assertThat(step.get("server_args").asString()).contains("--host ::1");
        assertThat(step.get("server").get("ready_via").asString()).isEqualTo("GET /health 200");
    }

    @Test
    void aServerListeningOnIpv6OnlyIsSaidToAnswerNowhereNotToBeLoading() throws Exception {
        Required.assumePresent("ipv6", ipv6Loopback(), "this machine has no IPv6 loopback (::1) to bind");
        String yaml = "experiment: v6only\n"
                + "model: test-model\n"
                + "context_pad: 100\n"
                + "vars:\n"
                + "  java: '" + TestEngines.javaBin() + "'\n"
                + "  cp: '" + TestEngines.classpath() + "'\n"
                + "load: {output_len: 1, num_prompts: 1, warmup: 0}\n"
                + "sweep: {strategy: list, targets: [1000]}\n"
                + "timeouts: {startup_s: 6, request_s: 5, shutdown_s: 2}\n"
                + "backends:\n"
                + "  - name: v6only\n"
                + "    engine: vllm\n"
                + "    command: '{java} -XX:+UseSerialGC -cp {cp} dev.ctxprobe.testengine.TestEngine"
                + " --host ::1 --port {port} --max-model-len {max_model_len}'\n";
        Path exp = dir.resolve("v6only.yaml");
        Files.writeString(exp, yaml);
        Path out = dir.resolve("out");

        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        JsonNode step = FaultRuns.results(FaultRuns.runDir(out, "v6only").orElseThrow())
                .get("scenarios")
                .get(0);
        assertThat(step.get("outcome").asString()).isEqualTo("startup_timeout");
        assertThat(step.get("error").asString())
                .as(step.toString())
                .contains("the log says the server is up, but nothing answered on 127.0.0.1:")
                .doesNotContain("still loading");
    }

    private static boolean ipv6Loopback() {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
