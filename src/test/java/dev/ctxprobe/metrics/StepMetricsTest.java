package dev.ctxprobe.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.client.RequestOutcome;
import dev.ctxprobe.client.RequestRecord;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

class StepMetricsTest {

    private static final long MS = 1_000_000;
    private static final long TARGET = 65_536;

    /** A request sent at {@code sendMs} with its first event {@code ttftMs} later and tokens every 10 ms. */
    private static RequestRecord record(
            int index, RequestOutcome outcome, Integer promptTokens, long sendMs, long ttftMs, int tokens) {
        long send = sendMs * MS;
        long first = send + ttftMs * MS;
        long last = first + (tokens - 1) * 10 * MS;
        double e2e = (last - send) / 1e6;
        boolean answered = outcome == RequestOutcome.OK;
        return new RequestRecord(
                index,
                false,
                TARGET,
                200,
                outcome,
                promptTokens,
                answered ? tokens : null,
                "length",
                answered ? tokens : 0,
                answered,
                send - MS,
                send,
                answered ? first : null,
                answered ? last : null,
                last + 3 * MS,
                1.0,
                answered ? (double) ttftMs : null,
                answered ? e2e : null,
                answered && tokens > 1 ? (e2e - ttftMs) / (tokens - 1) : null,
                answered ? java.util.Collections.nCopies(tokens - 1, 10.0) : List.of(),
                answered ? null : "boom",
                100,
                null,
                "");
    }

    @Test
    void aggregatesFollowTheSpec() {
        List<RequestRecord> measured = List.of(
                record(0, RequestOutcome.OK, (int) TARGET, 0, 500, 3),
                record(1, RequestOutcome.OK, (int) TARGET, 100, 700, 3),
                record(2, RequestOutcome.HTTP_STATUS, null, 200, 0, 1));

        StepMetrics m = StepMetrics.from(measured).orElseThrow();

        assertThat(m.successCount()).isEqualTo(2);
        assertThat(m.totalCount()).isEqualTo(3);
        // From the first send (0 ms) to the last request's end (100 + 700 + 20 + 3 ms).
        assertThat(m.durationS()).isEqualTo(0.823);
        assertThat(m.totalInputTokens()).isEqualTo(TARGET * m.successCount());
        assertThat(m.totalOutputTokens()).isEqualTo(6);
        assertThat(m.inputTokenThroughput()).isEqualTo(m.totalInputTokens() / m.durationS());
        assertThat(m.outputTokenThroughput()).isEqualTo(6 / 0.823);
        assertThat(m.requestThroughput()).isEqualTo(2 / 0.823);
        assertThat(m.ttftMs().mean()).isEqualTo(600.0);
        assertThat(m.ttftMs().p90()).isEqualTo(680.0);
        assertThat(m.e2eMs().max()).isEqualTo(720.0);
        assertThat(m.tpotMs().count()).isEqualTo(2);
        assertThat(m.tpotMs().p50()).isEqualTo(10.0);
        assertThat(m.itlMs().count()).isEqualTo(4);
    }

    @Test
    void wrongPromptLengthIsNoSuccessUnlessTheCallerSaysSo() {
        List<RequestRecord> measured = List.of(record(0, RequestOutcome.OK, 65_000, 0, 500, 1));

        assertThat(StepMetrics.from(measured)).isEmpty();
        StepMetrics lenient = StepMetrics.from(measured, RequestRecord::ok).orElseThrow();
        assertThat(lenient.totalInputTokens()).isEqualTo(65_000);
    }

    @Test
    void oneOutputTokenGivesZeroTpotAndItlLikeTheSeeds() {
        StepMetrics m = StepMetrics.from(List.of(record(0, RequestOutcome.OK, (int) TARGET, 0, 521, 1)))
                .orElseThrow();

        assertThat(m.tpotMs()).isEqualTo(Stats.EMPTY);
        assertThat(m.itlMs()).isEqualTo(Stats.EMPTY);
        assertThat(m.e2eMs().p99()).isEqualTo(521.0);
    }

    @Test
    void noSuccessMeansNoMetrics() {
        Optional<StepMetrics> m = StepMetrics.from(List.of(record(0, RequestOutcome.TIMEOUT, null, 0, 0, 1)));

        assertThat(m).isEmpty();
    }

    @Test
    void serialisesWithTheSeedKeysInTheSeedOrder() throws Exception {
        JsonMapper mapper = JsonMapper.builder()
                .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .build();
        StepMetrics m = StepMetrics.from(List.of(record(0, RequestOutcome.OK, (int) TARGET, 0, 521, 2)))
                .orElseThrow();

        JsonNode json = mapper.readTree(mapper.writeValueAsString(m));
        JsonNode seed = mapper.readTree(getClass().getResourceAsStream("/dev/ctxprobe/metrics/seed-metrics.json"))
                .get("metrics");

        assertThat(names(json)).containsExactlyElementsOf(names(seed));
        for (String stats : List.of("e2e_ms", "ttft_ms", "tpot_ms", "itl_ms")) {
            assertThat(names(json.get(stats)))
                    .containsExactly("mean", "p50", "p90", "p95", "p99", "count", "std", "min", "max");
            assertThat(names(json.get(stats))).startsWith(names(seed.get(stats)).toArray(String[]::new));
        }
        assertThat(json.get("total_input_tokens").isIntegralNumber()).isTrue();
    }

    private static List<String> names(JsonNode node) {
        return node.properties().stream().map(Map.Entry::getKey).toList();
    }
}
