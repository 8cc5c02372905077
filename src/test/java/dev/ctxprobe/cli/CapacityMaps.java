package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/** Reading a capacity map out of a run's results.json, as the capacity-map tests check it (docs/results.md). */
final class CapacityMaps {
    private CapacityMaps() {}

    /** The surface level of {@code n} requests at once in a backend's frontier. */
    static JsonNode level(JsonNode frontier, int n) {
        for (JsonNode level : frontier.get("surface")) {
            if (level.get("concurrency").asInt() == n) {
                return level;
            }
        }
        throw new AssertionError("no level " + n + " in " + frontier);
    }

    /** How many servers the run launched: the distinct server ids of its steps. */
    static int servers(JsonNode doc) {
        Set<String> ids = new HashSet<>();
        doc.get("scenarios").forEach(s -> {
            if (s.hasNonNull("server") && s.get("server").hasNonNull("id")) {
                ids.add(s.get("server").get("id").asString());
            }
        });
        return ids.size();
    }

    /** Within one align step below {@code truth}: the largest aligned target at or under it, or the one before. */
    static void withinOneStepBelow(JsonNode level, long truth, long align) {
        long ok = level.get("max_ok_target").asLong();
        assertThat(ok).as(level.toString()).isLessThanOrEqualTo(truth).isGreaterThanOrEqualTo(truth - align);
    }
}
