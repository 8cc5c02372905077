package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The shipped experiment files reproduce the seeds: validate prints each seed step's server_args exactly. */
class SeedExperimentsTest {

    @ParameterizedTest
    @CsvSource({
        "experiments/dsv4-h200.yaml, dsv4_h200_max_context_length.json",
        "experiments/dsv4-p800.yaml, dsv4_p800_max_context_length.json"
    })
    void validatePrintsTheSeedsServerArgs(String experiment, String seed) {
        CliRun run = CliRun.of("validate", experiment);
        assertThat(run.exitCode()).as(run.err()).isZero();

        List<String> printed = new ArrayList<>();
        for (String line : run.out().lines().toList()) {
            if (line.strip().startsWith("server_args: ")) {
                printed.add(line.strip().substring("server_args: ".length()));
            }
        }
        List<String> expected = new ArrayList<>();
        JsonNode seedDoc =
                JsonMapper.builder().build().readTree(FaultRuns.seed(seed).toFile());
        for (JsonNode s : seedDoc.get("scenarios")) {
            expected.add(s.get("server_args").asString());
        }
        assertThat(printed).containsExactlyElementsOf(expected);
    }
}
