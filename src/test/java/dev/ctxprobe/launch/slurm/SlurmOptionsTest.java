package dev.ctxprobe.launch.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlurmOptionsTest {

    @Test
    void everyOptionBecomesOneSbatchArgumentWithExtraArgsLast() {
        Map<String, Object> given = new LinkedHashMap<>();
        given.put("partition", "gpu");
        given.put("nodes", 2);
        given.put("gres", "gpu:8");
        given.put("time", "02:00:00");
        given.put("account", "proj");
        given.put("qos", "high");
        given.put("constraint", "h200&ib");
        given.put("mem", "200G");
        given.put("extra_args", List.of("--exclusive", "--cpus-per-task=16"));
        assertThat(SlurmOptions.check(given)).isEmpty();
        assertThat(SlurmOptions.of(given).sbatchArgs())
                .containsExactly(
                        "--nodes=2",
                        "--ntasks-per-node=1",
                        "--partition=gpu",
                        "--gres=gpu:8",
                        "--time=02:00:00",
                        "--account=proj",
                        "--qos=high",
                        "--constraint=h200&ib",
                        "--mem=200G",
                        "--exclusive",
                        "--cpus-per-task=16");
    }

    @Test
    void numbersAreMinutesAndMegabytesAsSlurmReadsThem() {
        Map<String, Object> given = Map.of("time", 30, "mem", 4096);
        assertThat(SlurmOptions.check(given)).isEmpty();
        assertThat(SlurmOptions.of(given).sbatchArgs()).contains("--time=30", "--mem=4096");
        assertThat(SlurmOptions.of(Map.of()).sbatchArgs()).containsExactly("--nodes=1", "--ntasks-per-node=1");
    }

    @Test
    void eachBadValueGetsOneSentenceSayingWhatToWrite() {
        assertThat(SlurmOptions.check(Map.of("nodes", 0))).containsKey("nodes");
        assertThat(SlurmOptions.check(Map.of("time", "two hours")).get("time")).contains("HH:MM:SS");
        assertThat(SlurmOptions.check(Map.of("mem", "lots")).get("mem")).contains("200G");
        assertThat(SlurmOptions.check(Map.of("partition", "gpu debug")).get("partition"))
                .contains("one word");
        assertThat(SlurmOptions.check(Map.of("partitions", "gpu")).get("partitions"))
                .isEqualTo("the slurm launcher has no option 'partitions'; its options are: partition, nodes, gres,"
                        + " time, account, qos, constraint, mem, extra_args");
        assertThat(SlurmOptions.check(Map.of("extra_args", "--exclusive")).get("extra_args"))
                .contains("a list");
        assertThat(SlurmOptions.check(Map.of("extra_args", List.of("--output=/tmp/x")))
                        .get("extra_args"))
                .isEqualTo("extra_args must not set --output: ctxprobe names each job and its logs and reads its id"
                        + " itself");
    }
}
