package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The frontier search through real launches of the test engine at known capacities. */
class FrontierIT {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String LOAD = "  output_len: 1\n  num_prompts: 1\n  warmup: 0\n";
    private static final long PAD = 100;

    @TempDir
    Path dir;

    private JsonNode run(String name, String sweep, String backend) throws IOException {
        Path exp = TestExperiments.write(dir, name, sweep, LOAD, backend);
        CliRun run =
                CliRun.of("run", exp.toString(), "--out", dir.resolve("out").toString(), "--quiet");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        try (Stream<Path> runs = Files.list(dir.resolve("out").resolve(name))) {
            return JSON.readTree(
                    runs.findFirst().orElseThrow().resolve("results.json").toFile());
        }
    }

    private static String frontier(long min, long max, int maxLaunches, String extra) {
        return "  strategy: frontier\n  frontier: {min: " + min + ", max: " + max + ", precision: 0.01, align: 256,"
                + " max_launches: " + maxLaunches + "}\n" + extra;
    }

    /** Targets whose step passed; the frontier may only name one of these. */
    private static List<Long> passed(JsonNode doc) {
        List<Long> ok = new ArrayList<>();
        doc.get("scenarios").forEach(s -> {
            if (s.get("success").asBoolean()) {
                ok.add(s.get("target_len").asLong());
            }
        });
        return ok;
    }

    @Test
    void aVllmLikeHintGivesAnAlignStepBracketInThreeLaunches() throws IOException {
        long capacity = 30_001; // not a multiple of the alignment
        JsonNode doc = run("hint", frontier(1024, 65536, 12, ""), "vllm|vllm|--capacity " + capacity);

        JsonNode f = doc.get("frontier").get("vllm");
        long best = (capacity - PAD) / 256 * 256;
        assertThat(f.get("max_ok_target").asLong()).isEqualTo(best);
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(best + 256);
        assertThat(f.get("launches").asInt()).isLessThanOrEqualTo(3);
        assertThat(f.get("predicted_max").asLong()).isEqualTo(capacity - PAD);
        assertThat(passed(doc)).contains(f.get("max_ok_target").asLong());
    }

    @Test
    void withoutHintsTheSearchBisectsWithinItsBound() throws IOException {
        long min = 1024;
        long max = 65536;
        // llama.cpp fails to allocate its KV cache above its capacity and names no limit: nothing to steer by.
        JsonNode doc = run("nohint", frontier(min, max, 20, ""), "llamacpp|llamacpp|--mode llamacpp --capacity 20000");

        JsonNode f = doc.get("frontier").get("llamacpp");
        long ok = f.get("max_ok_target").asLong();
        long failed = f.get("min_failed_target").asLong();
        assertThat(ok).isLessThanOrEqualTo(20_000 - PAD);
        // Within precision, or one alignment step where 1% is finer than the alignment.
        assertThat(failed - ok).isLessThanOrEqualTo(Math.max((long) (0.01 * ok), 256));
        assertThat(failed).isGreaterThan(20_000 - PAD);
        int bound = 2 + (int) Math.ceil(Math.log((double) (max - min) / (0.01 * min)) / Math.log(2));
        assertThat(f.get("launches").asInt()).isLessThanOrEqualTo(bound);
        assertThat(passed(doc)).contains(ok);
        assertThat(doc.get("scenarios").findValuesAsString("outcome")).contains("kv_insufficient");
    }

    @Test
    void everythingFitsAfterOneLaunch() throws IOException {
        JsonNode doc = run("fits", frontier(1024, 8192, 12, ""), "vllm|vllm|--capacity 100000");
        JsonNode f = doc.get("frontier").get("vllm");
        assertThat(f.get("max_ok_target").asLong()).isEqualTo(8192);
        assertThat(f.get("launches").asInt()).isEqualTo(1);
    }

    @Test
    void nothingFitsIsReportedWithoutAPass() throws IOException {
        JsonNode doc = run("none", frontier(4096, 8192, 12, ""), "vllm|vllm|--capacity 1000");
        JsonNode f = doc.get("frontier").get("vllm");
        assertThat(f.get("max_ok_target").isNull()).isTrue();
        assertThat(f.get("min_failed_target").asLong()).isEqualTo(4096);
        assertThat(passed(doc)).isEmpty();
    }

    @Test
    void aFailureBelowAPassIsListedAsNonMonotonic() throws IOException {
        JsonNode doc = run(
                "nonmono",
                "  strategy: list\n  targets: [2048, 4096, 8192]\n",
                "vllm|vllm|--capacity 100000 --refuse-at " + (4096 + PAD));
        JsonNode f = doc.get("frontier").get("vllm");
        assertThat(f.get("max_ok_target").asLong()).isEqualTo(8192);
        assertThat(f.get("non_monotonic")).extracting(JsonNode::asLong).containsExactly(4096L);
    }

    @Test
    void restartOnFailureFindsAnSglangFrontierWithOneLaunch() throws IOException {
        JsonNode doc = run(
                "onfailure",
                frontier(1024, 65536, 12, "  restart: on_failure\n"),
                "sglang|sglang|--mode sglang --capacity 20000");
        JsonNode f = doc.get("frontier").get("sglang");
        assertThat(f.get("launches").asInt()).isEqualTo(1);
        assertThat(f.get("mode").asString()).isEqualTo("on_failure");
        long ok = f.get("max_ok_target").asLong();
        assertThat(ok).isLessThan(20_000).isGreaterThanOrEqualTo(20_000 - 2 - 256);
        assertThat(f.get("min_failed_target").asLong() - ok).isLessThanOrEqualTo(256);
        assertThat(passed(doc)).contains(ok);
    }

    @Test
    void aKeptServerThatCrashesIsReplacedAndEachLaunchKeepsItsOwnLog() throws IOException {
        JsonNode doc = run(
                "crashes",
                frontier(1024, 4096, 3, "  restart: on_failure\n"),
                "sglang|sglang|--mode sglang --fault crash-mid-request");

        List<String> logs = new ArrayList<>();
        doc.get("scenarios").forEach(s -> {
            assertThat(s.get("outcome").asString()).isEqualTo("server_crash");
            logs.add(s.get("log").asString());
        });
        assertThat(logs).hasSizeGreaterThan(1).doesNotHaveDuplicates();
        assertThat(doc.get("frontier").get("sglang").get("launches").asInt()).isEqualTo(logs.size());
    }
}
