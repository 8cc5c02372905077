package dev.ctxprobe.launch.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.ExperimentError;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.run.Experiments;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The slurm launcher as an experiment file names it, read by the loader this ctxprobe uses. */
class SlurmExperimentTest {
    private static final Path FILE = Path.of("cluster.yaml");

    private static String experiment(String launcher, String backendLauncher, String command) {
        return """
                experiment: c1
                model: /m
                sweep: {strategy: list, targets: [1024]}
                timeouts: {queue_s: 90}
                %s
                backends:
                  - name: sg
                    engine: sglang
                    %s
                    command: %s
                """.formatted(launcher, backendLauncher, command);
    }

    @Test
    void aBackendsOptionsGoOverTheTopLevelAndPerNodePlaceholdersReachTheLauncherAsWritten() throws ExperimentError {
        Experiment e = Experiments.loader()
                .parse(
                        FILE,
                        experiment(
                                "launcher: {kind: slurm, partition: gpu, time: \"01:00:00\"}",
                                "launcher: {nodes: 2, gres: \"gpu:8\"}",
                                "sglang serve --nnodes {nnodes} --node-rank {node_rank}"
                                        + " --dist-init-addr {head_host}:{dist_port} --port {port}"));
        Experiment.Launcher l = e.backends().getFirst().launcher();
        assertThat(l.kind()).isEqualTo("slurm");
        assertThat(l.options()).isEqualTo(Map.of("partition", "gpu", "time", "01:00:00", "nodes", 2, "gres", "gpu:8"));
        assertThat(e.timeouts().queue()).isEqualTo(Duration.ofSeconds(90));
        ServerCommand c = ServerCommand.resolve(e, e.backends().getFirst(), 1024, 30000);
        assertThat(c.argv())
                .isEqualTo(List.of(
                        "sglang",
                        "serve",
                        "--nnodes",
                        "{nnodes}",
                        "--node-rank",
                        "{node_rank}",
                        "--dist-init-addr",
                        "{head_host}:{dist_port}",
                        "--port",
                        "30000"));
    }

    @Test
    void aBadOptionIsReportedAtItsLine() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> Experiments.loader()
                        .parse(FILE, experiment("launcher: slurm", "launcher: {nodes: 0}", "sglang serve")));
        assertThat(err.getMessage()).startsWith("cluster.yaml:9:").contains("nodes is how many nodes the engine spans");
    }

    @Test
    void aPerNodePlaceholderWithTheLocalLauncherSaysWhichLauncherFillsIt() {
        ExperimentError err = catchThrowableOfType(
                ExperimentError.class,
                () -> Experiments.loader().parse(FILE, experiment("", "", "sglang serve --node-rank {node_rank}")));
        assertThat(err.getMessage())
                .contains("{node_rank} is filled in for each node by the 'slurm' launcher; this backend's launcher is"
                        + " 'local'");
    }
}
