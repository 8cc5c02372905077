package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.explore.StepPhase;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The console's lines with a clock of the test's own: what a terminal and a log file get, and when. */
class ConsoleTest {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    @TempDir
    Path dir;

    private String printed() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private void advance(long seconds) {
        now.addAndGet(TimeUnit.SECONDS.toNanos(seconds));
    }

    private static ResultDocument docWith(Scenario... steps) {
        return new ResultDocument(null, null, List.of(steps), null);
    }

    private static Scenario failed(long target) {
        return Scenario.builder("vllm", target, target + 1024, "vllm serve")
                .outcome(Outcome.failed(FailureClass.STARTUP_TIMEOUT), "startup_timeout: not ready after 30 s", null)
                .build();
    }

    @Test
    void withoutATerminalAPlainLineComesAfterEach30sOfOnePhase() throws Exception {
        Path log = Files.writeString(dir.resolve("s.log"), "INFO 07-08 14:35:01 [core.py:1] Loading weights\n");
        Console c = new Console(out, new Console.Style(false, false, false, false), 0, now::get);
        c.stepStarting("vllm", 65_536, 1, 66_560);
        c.stepPhase("vllm", 65_536, StepPhase.QUEUED, null);
        advance(1);
        c.stepPhase("vllm", 65_536, StepPhase.LOADING, log);
        advance(29);
        c.tick();
        assertThat(printed()).as("29 s into loading").isEmpty();
        advance(1);
        c.tick();
        c.tick();
        assertThat(printed()).isEqualTo("[1] vllm            65,536  loading for 30 s: Loading weights\n");
        advance(30);
        c.tick();
        assertThat(printed()).endsWith("[1] vllm            65,536  loading for 1 min 00 s: Loading weights\n");
        c.stepPhase("vllm", 65_536, StepPhase.PREFILL, log);
        advance(20);
        c.tick();
        assertThat(printed().lines()).as("a new phase starts its own 30 s").hasSize(2);
        advance(10);
        c.tick();
        assertThat(printed()).endsWith("[1] vllm            65,536  prefill for 30 s: Loading weights\n");
        assertThat(printed()).doesNotContain("\r");
    }

    @Test
    void stepsAreNumberedAlikeWhenTheyStartAndWhenTheyEnd() {
        Console c = new Console(out, new Console.Style(false, true, false, false), 0, now::get);
        c.stepStarting("vllm", 1000, 1, 2024);
        Scenario first = failed(1000);
        c.stepFinished(first, docWith(first));
        c.stepStarting("vllm", 2000, 1, 3024);
        Scenario second = failed(2000);
        c.stepFinished(second, docWith(first, second));
        assertThat(printed().lines().filter(l -> l.startsWith("[")))
                .containsExactly(
                        "[1] vllm 1,000 tokens: starting (max_model_len 2,024)",
                        "[1] vllm             1,000  FAIL  startup_timeout: not ready after 30 s",
                        "[2] vllm 2,000 tokens: starting (max_model_len 3,024)",
                        "[2] vllm             2,000  FAIL  startup_timeout: not ready after 30 s");
    }

    @Test
    void onATerminalTheLineIsRedrawnInPlaceAndFinishedThere() {
        Console c = new Console(out, new Console.Style(false, false, true, false), 0, now::get);
        c.stepStarting("vllm", 1000, 1, 2024);
        c.stepPhase("vllm", 1000, StepPhase.LOADING, null);
        advance(3);
        c.tick();
        c.stepPhase("vllm", 1000, StepPhase.PREFILL, null);
        advance(2);
        c.tick();
        Scenario done = failed(1000);
        c.stepFinished(done, docWith(done));
        assertThat(printed().split("\r", -1))
                .containsExactly(
                        "",
                        "[1] vllm             1,000  / starting 0 s\u001B[K",
                        "[1] vllm             1,000  - loading 3 s\u001B[K",
                        "[1] vllm             1,000  \\ prefill 2 s (step 5 s)\u001B[K",
                        "\u001B[K[1] vllm             1,000  FAIL  startup_timeout: not ready after 30 s\n");
    }

    @Test
    void withBackendsAtOnceEachLiveStepHasItsLineBelowTheFinishedOnes() {
        Console c = new Console(out, new Console.Style(false, false, true, true), 0, now::get);
        c.stepStarting("vllm", 1000, 1, 2024);
        c.stepStarting("sglang", 4000, 1, 5024);
        c.stepPhase("sglang", 4000, StepPhase.LOADING, null);
        advance(2);
        c.tick();
        Scenario done = failed(1000);
        c.stepFinished(done, docWith(done));
        String up1 = "\u001B[1F\u001B[J";
        String up2 = "\u001B[2F\u001B[J";
        assertThat(printed())
                .isEqualTo("[1] vllm             1,000  / starting 0 s\n"
                        + up1
                        + "[1] vllm             1,000  - starting 0 s\n"
                        + "[2] sglang           4,000  / starting 0 s\n"
                        + up2
                        + "[1] vllm             1,000  \\ starting 2 s\n"
                        + "[2] sglang           4,000  - loading 2 s\n"
                        + up2
                        + "[1] vllm             1,000  FAIL  startup_timeout: not ready after 30 s\n"
                        + "[2] sglang           4,000  \\ loading 2 s\n");
    }

    @Test
    void aProbeOfTheCapacityMapNamesItsRequestsAtOnceWhereverItsTargetIs() {
        Console c = new Console(out, new Console.Style(false, true, true, false), 0, now::get);
        c.stepStarting("vllm", 4096, 2, 5120);
        c.stepPhase("vllm", 4096, StepPhase.DECODING, null);
        advance(1);
        c.tick();
        Scenario done = Scenario.builder(new dev.ctxprobe.results.Point("vllm", null, 4096, 2), 5120, "vllm serve")
                .outcome(Outcome.failed(FailureClass.NOT_CONCURRENT), "not_concurrent: queued", null)
                .build();
        c.stepFinished(done, docWith(done));
        assertThat(printed())
                .startsWith("[1] vllm 4,096 x2 tokens: starting (max_model_len 5,120)\n")
                .contains("\r[1] vllm          4,096 x2  / starting 0 s\u001B[K")
                .contains("\r[1] vllm          4,096 x2  - decoding 1 s\u001B[K")
                .endsWith("[1] vllm          4,096 x2  FAIL  not_concurrent: queued\n");
    }

    @Test
    void aSinglePromptsLineIsAsBeforeTheMap() {
        assertThat(Console.stepLine(3, failed(4096)))
                .isEqualTo("[3] vllm             4,096  FAIL  startup_timeout: not ready after 30 s");
    }

    @Test
    void quietPrintsNoProgress() {
        Console c = new Console(out, new Console.Style(true, false, true, false), 0, now::get);
        c.stepStarting("vllm", 1000, 1, 2024);
        c.stepPhase("vllm", 1000, StepPhase.LOADING, null);
        advance(60);
        c.tick();
        assertThat(printed()).isEmpty();
    }

    @Test
    void elapsedTimesReadAsAPersonSaysThem() {
        assertThat(Console.elapsed(TimeUnit.MILLISECONDS.toNanos(42_900))).isEqualTo("42 s");
        assertThat(Console.elapsed(TimeUnit.SECONDS.toNanos(185))).isEqualTo("3 min 05 s");
        assertThat(Console.elapsed(TimeUnit.SECONDS.toNanos(3720))).isEqualTo("1 h 02 min");
    }

    @Test
    void aLineIsCutToTheTerminalSoItNeverWraps() {
        assertThat(Console.fit("x".repeat(100), 80)).hasSize(79).endsWith("…");
        assertThat(Console.fit("short", 80)).isEqualTo("short");
    }
}
