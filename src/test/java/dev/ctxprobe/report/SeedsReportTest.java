package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * {@code ctxprobe report seeds --format md} against the seeds read independently here: per hardware and
 * backend the largest passing and smallest failing target, and the TTFT at every length.
 */
class SeedsReportTest {

    /** What the test reads from a seed itself, per backend. */
    record Expected(long maxOk, long minFailed, Map<Long, String> ttftByTarget) {}

    @Test
    void markdownReportShowsTheSeedsFrontiersAndTtftPerLength() throws Exception {
        List<Path> files = ReportFixtures.seedFiles(ReportFixtures.SEEDS);

        List<String> args = new ArrayList<>(List.of("report"));
        files.forEach(f -> args.add(f.toString()));
        args.addAll(List.of("--format", "md"));
        ReportFixtures.Run run = ReportFixtures.ctxprobe(args.toArray(String[]::new));
        assertThat(run.exitCode()).as(run.err()).isZero();

        Map<String, Expected> expected = new LinkedHashMap<>();
        for (Path file : files) {
            expected.putAll(expectedFrom(file));
        }
        assertThat(expected)
                .containsKeys(
                        "8x NVIDIA H200 143GB / sglang", "8x NVIDIA H200 143GB / vllm", "8x Kunlun P800 XPU / sglang");

        Map<String, List<String>> frontier = frontierRows(run.out());
        Map<String, Map<Long, String>> ttft = ttftRows(run.out());
        for (Map.Entry<String, Expected> e : expected.entrySet()) {
            List<String> row = frontier.get(e.getKey());
            assertThat(row).as("frontier row of %s", e.getKey()).isNotNull();
            assertThat(tokens(row.get(2)))
                    .as("max passing of %s", e.getKey())
                    .isEqualTo(e.getValue().maxOk());
            assertThat(tokens(row.get(3)))
                    .as("min failing of %s", e.getKey())
                    .isEqualTo(e.getValue().minFailed());
            assertThat(ttft.get(e.getKey()))
                    .as("TTFT per length of %s", e.getKey())
                    .isEqualTo(e.getValue().ttftByTarget());
        }
        // The prefill rate is the target over the TTFT; the seed's own throughput divides by a duration that, in the
        // P800 file, holds three seconds of something else.
        assertThat(run.out())
                .contains("| sglang | 65,536 | 66,560 | ok | 390.7 | 390.7 | 167,737 | 18,557 | floor unknown |  |")
                .contains("prefill tok/s (target / TTFT) | input tok/s (input tokens / duration)");
        // Each H200 step against its floor under each assumption (docs/results.md, % of roofline): the seed's
        // 3.150 s at 917,504 is 141.7% of the FP8 floor with the indexer, 69.0% without it; the P800 has no
        // sourced peak.
        assertThat(run.out())
                .contains(
                        "| sglang | 917,504 | 918,528 | ok | 3,149.6 | 3,149.6 | 291,310 | 291,063 | 141.7% impossible |")
                .contains("| sglang | 65,536 | 66,560 | ok | 521.2 | 521.3 | 125,734 | 125,021 | 25.1% |")
                .contains(
                        "- sglang 917,504  TTFT 3.150 s  FP8, linear+attention+indexer: 141.7% impossible (floor"
                                + " 4.461 s); FP8, linear+attention: 69.0% (floor 2.175 s); BF16, linear+attention+indexer:"
                                + " 283.4% impossible (floor 8.927 s); BF16, linear+attention: 138.2% impossible (floor 4.351 s)")
                .contains("- sglang: floor unknown: Kunlunxin publishes no dense peak for the P800");
        // The numbers the spec quotes for the seeds (01-product.md).
        assertThat(expected.get("8x NVIDIA H200 143GB / vllm").maxOk()).isEqualTo(917_504);
        assertThat(expected.get("8x Kunlun P800 XPU / sglang").minFailed()).isEqualTo(262_144);
    }

    @Test
    void htmlComparesTheSeedsSideBySide() throws Exception {
        String html = Reports.renderFiles(ReportFixtures.seedFiles(ReportFixtures.SEEDS), Format.HTML);

        for (String series : List.of(
                "8x NVIDIA H200 143GB / sglang", "8x NVIDIA H200 143GB / vllm", "8x Kunlun P800 XPU / sglang")) {
            // In the frontier table and as a series (and its failures) in both charts.
            assertThat(html).contains("<td class=\"label\">" + series + "</td>");
            assertThat(html.split(">" + series + "<", -1)).hasSize(4);
            assertThat(html.split(">" + series + ": failed<", -1)).hasSize(3);
        }
    }

    private static Map<String, Expected> expectedFrom(Path file) throws Exception {
        JsonNode root = new ObjectMapper().readTree(file.toFile());
        String hardware = root.get("metadata").get("hardware").asString();
        Map<String, Expected> out = new LinkedHashMap<>();
        for (JsonNode s : root.get("scenarios")) {
            String key = hardware + " / " + s.get("backend").asString();
            Expected old = out.getOrDefault(key, new Expected(-1, Long.MAX_VALUE, new TreeMap<>()));
            long target = s.get("target_len").asLong();
            Map<Long, String> ttft = new TreeMap<>(old.ttftByTarget());
            if (s.get("success").asBoolean()) {
                double mean = s.get("metrics").get("ttft_ms").get("mean").asDouble();
                ttft.put(target, String.format(Locale.US, "%,.1f", mean));
                out.put(key, new Expected(Math.max(old.maxOk(), target), old.minFailed(), ttft));
            } else {
                out.put(key, new Expected(old.maxOk(), Math.min(old.minFailed(), target), ttft));
            }
        }
        return out;
    }

    /** Frontier table rows keyed by {@code hardware / backend}: the cells after the first two. */
    private static Map<String, List<String>> frontierRows(String md) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        String section = md.substring(md.indexOf("## Frontier"), md.indexOf("\n## ", md.indexOf("## Frontier")));
        for (String line : section.split("\n")) {
            List<String> cells = cells(line);
            if (cells.size() > 4
                    && !cells.get(0).equals("hardware")
                    && !cells.get(0).equals("---")) {
                rows.put(cells.get(0) + " / " + cells.get(1), cells);
            }
        }
        return rows;
    }

    /** The TTFT column of each step table, keyed by the section's hardware and the row's backend. */
    private static Map<String, Map<Long, String>> ttftRows(String md) {
        Map<String, Map<Long, String>> out = new LinkedHashMap<>();
        String hardware = null;
        for (String line : md.split("\n")) {
            if (line.startsWith("## ") && !line.equals("## Frontier")) {
                hardware = line.substring(3, line.indexOf(':'));
                continue;
            }
            List<String> cells = cells(line);
            if (hardware == null || cells.size() != 10 || !cells.get(3).equals("ok")) {
                continue;
            }
            out.computeIfAbsent(hardware + " / " + cells.get(0), k -> new TreeMap<>())
                    .put(tokens(cells.get(1)), cells.get(4));
        }
        return out;
    }

    private static List<String> cells(String line) {
        if (!line.startsWith("|")) {
            return List.of();
        }
        List<String> cells = new ArrayList<>();
        for (String cell : line.substring(1, line.length() - 1).split("(?<!\\\\)\\|", -1)) {
            cells.add(cell.strip());
        }
        return cells;
    }

    private static long tokens(String cell) {
        return Long.parseLong(cell.replace(",", ""));
    }
}
