package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import dev.ctxprobe.testengine.TestEngines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failure 5: two runs of one experiment with fixed ports both exited 0, each with the other's server in
 * its results. A second run of the experiment folder, and any run that wants a fixed port a live run holds, are now
 * refused before they launch anything, and the live run's results are its own.
 */
class ConcurrentRunsIT {
    @TempDir
    Path dir;

    private Process first;

    @AfterEach
    void endWhatIsLeft() {
        if (first != null && first.isAlive()) {
            first.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
    }

    @Test
    void aSecondRunOfTheExperimentAndARunOnItsPortAreRefusedBeforeLaunching() throws Exception {
        int portA = TestEngines.freePort();
        int portB = TestEngines.freePort();
        // About 2 s of prefill per step: the first run is live while the others try.
        String slow = "--prefill-us-per-token 2000";
        Path exp = FaultRuns.write(
                dir,
                "fixed",
                List.of(1000L, 1200L),
                0,
                List.of(new Backend("vllm", portA, slow), new Backend("sglang", portB, slow)));
        Path out = dir.resolve("out");
        first = FaultRuns.startCtxprobe(dir.resolve("first.log"), "run", exp.toString(), "--out", out.toString());
        FaultRuns.awaitServerUp(out, "fixed", "Application startup complete.", 30);

        CliRun again = CliRun.of("run", exp.toString(), "--out", out.toString());
        Path other = FaultRuns.write(dir, "neighbour", List.of(1000L), 0, List.of(new Backend("mine", portB, "")));
        CliRun neighbour = CliRun.of("run", other.toString(), "--out", out.toString());

        System.out.println("second run of the experiment: " + again.err().strip());
        System.out.println("run on its port: " + neighbour.err().strip());
        assertThat(again.exitCode()).as(again.out() + again.err()).isEqualTo(2);
        assertThat(again.err()).contains("another run of fixed is going on").contains("nothing was launched");
        assertThat(neighbour.exitCode()).as(neighbour.out() + neighbour.err()).isEqualTo(2);
        assertThat(neighbour.err())
                .contains("port " + portB + " of backend mine is in use by another run")
                .contains("nothing was launched");
        try (var runs = Files.list(out.resolve("fixed"))) {
            assertThat(runs.filter(Files::isDirectory))
                    .as("run folders of the experiment")
                    .hasSize(1);
        }
        assertThat(out.resolve("neighbour")).doesNotExist();

        assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(first.exitValue())
                .as(Files.readString(dir.resolve("first.log")))
                .isZero();
        JsonNode doc = FaultRuns.results(FaultRuns.runDir(out, "fixed").orElseThrow());
        assertThat(doc.get("scenarios")).hasSize(4);
        assertThat(doc.get("scenarios"))
                .as("no step saw another run's server")
                .allSatisfy(s -> assertThat(s.get("outcome").asString()).isEqualTo("ok"));

        CliRun afterwards = CliRun.of("run", other.toString(), "--out", out.toString(), "--quiet");
        assertThat(afterwards.exitCode())
                .as("the port is free once the run has ended")
                .isZero();
    }
}
