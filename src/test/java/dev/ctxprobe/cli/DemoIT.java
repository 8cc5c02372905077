package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built-in demo as a new user tries it, with the documented override: {@code ctxprobe run --strategy list}
 * (refused as "needs sweep.targets" before the override gave a list its lengths) and {@code --verbose}, whose
 * numbers must be the same when a step starts and when it ends.
 */
class DemoIT {
    @TempDir
    Path dir;

    @Test
    void theDemoRunsAsAListWithStepsNumberedAlike() {
        CliRun r = CliRun.of("run", "--strategy", "list", "--verbose", "--out", dir.toString());
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        List<String> steps =
                r.out().lines().filter(l -> l.matches("\\[\\d+] .*")).toList();
        assertThat(steps)
                .as(r.out())
                .hasSize(10)
                .satisfies(l -> assertThat(l.get(0)).startsWith("[1] embedded 4,096 tokens: starting"))
                .satisfies(l -> assertThat(l.get(1)).startsWith("[1] embedded         4,096  ok    TTFT"))
                .satisfies(l -> assertThat(l.get(2)).startsWith("[2] embedded 8,192 tokens: starting"))
                .satisfies(l -> assertThat(l.get(3)).startsWith("[2] embedded         8,192  ok    TTFT"))
                .satisfies(l -> assertThat(l.get(8)).startsWith("[5] embedded 65,536 tokens: starting"))
                .satisfies(l -> assertThat(l.get(9))
                        .startsWith("[5] embedded        65,536  FAIL  kv_insufficient: server failed to start: the KV"
                                + " budget holds 43,690 tokens, 66,560 requested"));
        assertThat(r.out()).contains("embedded max 32,768 tokens (next 65,536 fails: kv_insufficient)  5 launches");
    }
}
