package dev.ctxprobe.launch.slurm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The options of {@code launcher: {kind: slurm, ...}}: where and with what each step's job runs. Every value becomes
 * one {@code sbatch} option; {@code extra_args} come last, so they override what ctxprobe writes (e.g. {@code
 * --ntasks-per-node}).
 *
 * @param nodes how many nodes the engine spans: one task on each, rank 0 serves HTTP
 * @param extraArgs further {@code sbatch} arguments, word by word
 */
public record SlurmOptions(
        String partition,
        int nodes,
        String gres,
        String time,
        String account,
        String qos,
        String constraint,
        String mem,
        List<String> extraArgs) {

    /** The option names, in the order the documentation lists them. */
    public static final List<String> NAMES =
            List.of("partition", "nodes", "gres", "time", "account", "qos", "constraint", "mem", "extra_args");

    // Slurm's --time formats (man sbatch): minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
    private static final Pattern TIME =
            Pattern.compile("\\d+|\\d+:\\d{1,2}|\\d+:\\d{1,2}:\\d{1,2}|\\d+-\\d+(:\\d{1,2}){0,2}|UNLIMITED|infinite");
    private static final Pattern MEM = Pattern.compile("\\d+[KMGT]?");
    private static final Pattern WORD = Pattern.compile("[^\\s=-][^\\s]*");

    /** sbatch options ctxprobe relies on setting itself: the job's name, its logs, how its id is printed. */
    private static final List<String> RESERVED = List.of(
            "-J",
            "--job-name",
            "-o",
            "--output",
            "-e",
            "--error",
            "--parsable",
            "--wrap",
            "-a",
            "--array",
            "-W",
            "--wait",
            "--test-only");

    public SlurmOptions {
        extraArgs = List.copyOf(extraArgs);
    }

    /** The problems of options as an experiment gives them, one sentence per option; empty when they are fine. */
    public static Map<String, String> check(Map<String, Object> options) {
        Map<String, String> problems = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : options.entrySet()) {
            String problem = problem(e.getKey(), e.getValue());
            if (problem != null) {
                problems.put(e.getKey(), problem);
            }
        }
        return problems;
    }

    private static String problem(String name, Object value) {
        return switch (name) {
            case "nodes" ->
                value instanceof Integer n && n >= 1
                        ? null
                        : "nodes is how many nodes the engine spans, a whole number 1 or more, e.g. 'nodes: 2'";
            case "time" ->
                text(value) != null && TIME.matcher(text(value)).matches()
                        ? null
                        : "time is the job's limit as Slurm writes it: minutes, 'HH:MM:SS' or 'D-HH:MM:SS', e.g."
                                + " 'time: \"02:00:00\"'";
            case "mem" ->
                text(value) != null && MEM.matcher(text(value)).matches()
                        ? null
                        : "mem is the memory per node, a number with an optional unit K, M, G or T, e.g."
                                + " 'mem: 200G'";
            case "partition", "gres", "account", "qos", "constraint" ->
                value instanceof String s && WORD.matcher(s).matches()
                        ? null
                        : name + " is one word as sbatch --" + name + " takes it, e.g. '" + example(name) + "'";
            case "extra_args" -> extraArgsProblem(value);
            default -> "the slurm launcher has no option '" + name + "'; its options are: " + String.join(", ", NAMES);
        };
    }

    private static String example(String name) {
        return switch (name) {
            case "partition" -> "partition: gpu";
            case "gres" -> "gres: gpu:8";
            case "account" -> "account: my-project";
            case "qos" -> "qos: normal";
            default -> "constraint: h200";
        };
    }

    private static String extraArgsProblem(Object value) {
        if (!(value instanceof List<?> list) || list.stream().anyMatch(w -> !(w instanceof String s) || s.isBlank())) {
            return "extra_args is a list of sbatch arguments, one word each, e.g. 'extra_args: [--exclusive,"
                    + " --cpus-per-task=16]'";
        }
        if (!list.isEmpty() && !((String) list.getFirst()).startsWith("-")) {
            return "extra_args starts with an sbatch option such as --exclusive, not '" + list.getFirst() + "'";
        }
        for (Object w : list) {
            String word = (String) w;
            String option = word.contains("=") ? word.substring(0, word.indexOf('=')) : word;
            if (RESERVED.contains(option)) {
                return "extra_args must not set " + option
                        + ": ctxprobe names each job and its logs and reads its id itself";
            }
        }
        return null;
    }

    private static String text(Object value) {
        if (value instanceof Integer || value instanceof Long) {
            return value.toString();
        }
        return value instanceof String s ? s : null;
    }

    /** Options that {@link #check} found fine. */
    public static SlurmOptions of(Map<String, Object> options) {
        List<String> extra = new ArrayList<>();
        if (options.get("extra_args") instanceof List<?> list) {
            list.forEach(w -> extra.add((String) w));
        }
        return new SlurmOptions(
                (String) options.get("partition"),
                options.get("nodes") instanceof Integer n ? n : 1,
                (String) options.get("gres"),
                text(options.get("time")),
                (String) options.get("account"),
                (String) options.get("qos"),
                (String) options.get("constraint"),
                text(options.get("mem")),
                extra);
    }

    /** The sbatch arguments these options stand for, {@code extra_args} last. */
    List<String> sbatchArgs() {
        List<String> args = new ArrayList<>();
        args.add("--nodes=" + nodes);
        args.add("--ntasks-per-node=1");
        add(args, "partition", partition);
        add(args, "gres", gres);
        add(args, "time", time);
        add(args, "account", account);
        add(args, "qos", qos);
        add(args, "constraint", constraint);
        add(args, "mem", mem);
        args.addAll(extraArgs);
        return args;
    }

    private static void add(List<String> args, String name, String value) {
        if (value != null) {
            args.add("--" + name + "=" + value);
        }
    }
}
