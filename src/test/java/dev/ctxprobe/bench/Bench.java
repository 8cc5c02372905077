package dev.ctxprobe.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The benchmarks of BENCHMARKS.md, run on demand ({@code bench/run NAME... [options]}): each prints one JSON line per
 * figure as it is measured and a table of all figures at the end. Never part of the test suite.
 */
public final class Bench {

    static final String USAGE = """
            usage: bench/run timing|memory|economy|overhead|faults|all ... [options]
              --reps N          repetitions: timing rounds per concurrency (each client a fresh process per round)
                                and requests per long prompt, overhead launches (default 5)
              --streams LIST    timing concurrencies (default 1,64,1000)
              --prompts LIST    timing prompt sizes in tokens, k/M suffixes allowed (default 1k,128k,1M)
              --events N        timing events per stream (default 8)
              --xmx SIZE        memory: also run ./ctxprobe with CTXPROBE_JAVA_OPTS=-XmxSIZE
              --no-embedded     economy: skip the embedded-engine (demo) runs
            faults: --reps N steps per fault (fatal line then hang, silent stall, hang at capacity), cause to verdict
            """;

    private Bench() {}

    /** Options shared by the benchmarks. */
    record Options(int reps, List<Integer> streams, List<Long> prompts, int events, String xmx, boolean embedded) {}

    public static void main(String[] args) throws Exception {
        Set<String> names = new LinkedHashSet<>();
        int reps = 5;
        List<Integer> streams = List.of(1, 64, 1000);
        List<Long> prompts = List.of(1_000L, 128_000L, 1_000_000L);
        int events = 8;
        String xmx = null;
        boolean embedded = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            try {
                switch (arg) {
                    case "timing", "memory", "economy", "overhead", "faults" -> names.add(args[i]);
                    case "all" -> names.addAll(List.of("timing", "memory", "economy", "overhead"));
                    case "--reps" -> reps = Integer.parseInt(value(args, ++i));
                    case "--streams" -> streams = ints(value(args, ++i));
                    case "--prompts" -> prompts = tokens(value(args, ++i));
                    case "--events" -> events = Integer.parseInt(value(args, ++i));
                    case "--xmx" -> xmx = value(args, ++i);
                    case "--no-embedded" -> embedded = false;
                    case "-h", "--help" -> {
                        System.out.print(USAGE);
                        return;
                    }
                    default -> usage("unknown argument '" + args[i] + "'");
                }
            } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
                usage(arg + " needs a number or a comma-separated list of them, got '" + args[i] + "'");
            }
        }
        if (names.isEmpty()) {
            usage("name at least one benchmark");
        }
        Options options = new Options(reps, streams, prompts, events, xmx, embedded);
        List<Figure> figures = new ArrayList<>();
        for (String name : names) {
            List<Figure> got = switch (name) {
                case "timing" -> TimingBench.run(options);
                case "memory" -> MemoryBench.run(options);
                case "economy" -> EconomyBench.run(options);
                case "overhead" -> OverheadBench.run(options);
                case "faults" -> FaultsBench.run(options);
                default -> throw new IllegalStateException(name);
            };
            figures.addAll(got);
        }
        printTable(figures);
    }

    /** Prints the figure's JSON line at once, so a long run shows progress. */
    static Figure emit(Figure figure) {
        System.out.println(figure.json());
        System.out.flush();
        return figure;
    }

    private static void printTable(List<Figure> figures) {
        String format = "%-9s %-22s %-38s %-48s %-5s %s%n";
        System.out.println();
        System.out.printf(Locale.ROOT, format, "bench", "figure", "conditions", "values", "unit", "bar");
        for (Figure f : figures) {
            System.out.printf(
                    Locale.ROOT, format, f.bench(), f.figure(), f.conditions(), f.numbers(), f.unit(), f.verdict());
        }
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            usage(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static List<Integer> ints(String list) {
        List<Integer> out = new ArrayList<>();
        for (String s : list.split(",")) {
            out.add(Integer.parseInt(s.strip()));
        }
        return out;
    }

    /** "1k,128k,1M" as token counts (k = 1000, M = 1,000,000, as the spec's "1M tokens"). */
    static List<Long> tokens(String list) {
        List<Long> out = new ArrayList<>();
        for (String s : list.split(",")) {
            out.add(tokenCount(s.strip()));
        }
        return out;
    }

    static long tokenCount(String s) {
        char last = Character.toLowerCase(s.charAt(s.length() - 1));
        long scale = last == 'k' ? 1_000 : last == 'm' ? 1_000_000 : 1;
        return Long.parseLong(scale == 1 ? s : s.substring(0, s.length() - 1)) * scale;
    }

    static String tokenLabel(long tokens) {
        if (tokens % 1_000_000 == 0) {
            return tokens / 1_000_000 + "M";
        }
        return tokens % 1_000 == 0 ? tokens / 1_000 + "k" : Long.toString(tokens);
    }

    /** Deletes a benchmark's scratch folder (run folders, logs) and everything in it. */
    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static void usage(String problem) {
        System.err.println("bench: " + problem);
        System.err.print(USAGE);
        System.exit(2);
    }
}
