package dev.ctxprobe.predict;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Input;
import dev.ctxprobe.results.MatrixGrid;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.Roofline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** A plan as plain text (the console), Markdown (reports, issues) and JSON (snake_case, as results.json). */
public final class PlanFormat {
    private static final JsonMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();

    private PlanFormat() {}

    /** The plan for a terminal: one headline per backend, then its arithmetic, inputs, missing inputs. */
    public static String text(Prediction plan) {
        StringBuilder out = new StringBuilder();
        out.append("plan for ").append(plan.experiment());
        if (!plan.file().isEmpty()) {
            out.append(" (").append(plan.file()).append(')');
        }
        out.append("\n");
        int width = plan.backends().stream()
                .mapToInt(b -> b.backend().length())
                .max()
                .orElse(0);
        for (BackendPrediction p : plan.backends()) {
            out.append("\n").append(text(p, width));
        }
        for (MatrixGrid g : plan.grids()) {
            out.append("\nmatrix ").append(g.title()).append(": predicted frontier (what sets it)\n");
            out.append(textTable(gridRows(plan, g)));
        }
        if (!plan.warnings().isEmpty()) {
            out.append("\nwarnings:\n");
            for (TargetWarning w : plan.warnings()) {
                out.append("  ")
                        .append(w.backend())
                        .append(": ")
                        .append(w.message())
                        .append('\n');
            }
        }
        return out.toString();
    }

    /** One backend's prediction for a terminal. */
    public static String text(BackendPrediction p) {
        return text(p, p.backend().length());
    }

    private static String text(BackendPrediction p, int width) {
        StringBuilder out = new StringBuilder();
        out.append(String.format("%-" + Math.max(1, width) + "s  ", p.backend()));
        out.append(headline(p)).append('\n');
        out.append("  ").append(p.summary()).append('\n');
        section(out, "arithmetic", p.arithmetic());
        section(
                out,
                "inputs",
                p.inputs().stream()
                        .map(i -> i.name() + " = " + i.value() + "  ("
                                + i.source().id() + ": " + i.where() + ")")
                        .toList());
        section(
                out,
                "missing",
                p.missing().stream().map(m -> m.name() + ": " + m.how()).toList());
        section(out, "assumptions", p.assumptions());
        section(out, "capacity map (largest target held at once)", surfaceLines(p));
        section(out, "prefill floor (docs/results.md, % of roofline)", floorLines(p.prefillFloor()));
        return out.toString();
    }

    /**
     * The predicted capacity map, one line per concurrency above 1: {@code x2: 9,792 (KV pool 19,648 / 2 - 16
     * output)}, {@code x8: none (more requests than 4 slots)} (docs/plan.md#the-capacity-map).
     */
    static List<String> surfaceLines(BackendPrediction p) {
        return p.surface().stream()
                .map(l -> "x" + l.concurrency() + ": " + (l.target() == null ? "none" : Format.tokens(l.target()))
                        + " (" + l.why() + ")")
                .toList();
    }

    /**
     * The floor at each planned target under each assumption, then what it assumed, or why it is unknown: what
     * {@code timeouts.request_s} is set from (docs/plan.md).
     */
    static List<String> floorLines(PrefillFloor f) {
        if (f == null) {
            return List.of();
        }
        List<String> lines = new ArrayList<>();
        if (!f.known()) {
            lines.add("unknown: " + f.unknown());
            return lines;
        }
        for (long target : f.targets()) {
            List<String> floors = new ArrayList<>();
            for (Roofline.Floor floor : f.at(target)) {
                floors.add(String.format(
                        Locale.ROOT,
                        "%s s (%s, %s)",
                        Format.decimal(Math.round(floor.floorS() * 1000) / 1000.0),
                        floor.dtype().toUpperCase(Locale.ROOT),
                        floor.counted()));
            }
            lines.add("at " + Format.tokens(target) + ": " + String.join("; ", floors));
        }
        lines.add("device: " + f.device() + ", model: " + f.model());
        lines.addAll(f.assumptions());
        return lines;
    }

    /** A grid's header and rows: each cell's predicted target and its bound, {@code 20,736 (KV memory)}. */
    private static List<List<String>> gridRows(Prediction plan, MatrixGrid g) {
        List<List<String>> rows = new ArrayList<>();
        List<String> header = new ArrayList<>();
        header.add(g.across() == null ? g.down() : g.down() + " \\ " + g.across());
        header.addAll(g.across() == null ? List.of("predicted") : g.columns());
        rows.add(header);
        for (String r : g.rows()) {
            List<String> row = new ArrayList<>();
            row.add(r);
            for (String c : g.columns()) {
                BackendPrediction p = g.at(r, c) == null ? null : plan.of(g.at(r, c));
                row.add(
                        p == null
                                ? ""
                                : p.target() == null
                                        ? "none (" + p.bound().label() + ")"
                                        : Format.tokens(p.target()) + " ("
                                                + p.bound().label() + ")");
            }
            rows.add(row);
        }
        return rows;
    }

    // Columns padded to their widest cell, two spaces apart, no trailing blanks.
    private static String textTable(List<List<String>> rows) {
        int[] widths = new int[rows.getFirst().size()];
        rows.forEach(r -> {
            for (int i = 0; i < r.size(); i++) {
                widths[i] = Math.max(widths[i], r.get(i).length());
            }
        });
        StringBuilder out = new StringBuilder();
        for (List<String> r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.size(); i++) {
                line.append(String.format("%-" + widths[i] + "s", r.get(i))).append(i + 1 < r.size() ? "  " : "");
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String headline(BackendPrediction p) {
        if (p.target() == null) {
            return "no prediction (" + p.bound().label() + ")";
        }
        return "predicted " + Format.tokens(p.target()) + " tokens (set by "
                + p.bound().label() + ")";
    }

    private static void section(StringBuilder out, String title, List<String> lines) {
        if (lines.isEmpty()) {
            return;
        }
        out.append("  ").append(title).append(":\n");
        for (String line : lines) {
            out.append("    ").append(line).append('\n');
        }
    }

    /** The plan as Markdown: a summary table, then one section per backend. */
    public static String markdown(Prediction plan) {
        StringBuilder out = new StringBuilder();
        out.append("# Plan: ").append(md(plan.experiment())).append("\n\n");
        if (!plan.file().isEmpty()) {
            out.append("Experiment file: `").append(plan.file()).append("`\n\n");
        }
        out.append("| backend | engine | predicted target | set by |\n|---|---|---:|---|\n");
        for (BackendPrediction p : plan.backends()) {
            row(
                    out,
                    md(p.backend()),
                    md(p.engine()),
                    p.target() == null ? "none" : Format.tokens(p.target()),
                    md(p.bound().label()));
        }
        for (MatrixGrid g : plan.grids()) {
            List<List<String>> rows = gridRows(plan, g);
            out.append("\n**Matrix ").append(md(g.title())).append("**: predicted frontier (what sets it)\n\n");
            row(out, rows.getFirst().stream().map(PlanFormat::md).toArray(String[]::new));
            out.append("|").append("---|".repeat(rows.getFirst().size())).append('\n');
            rows.subList(1, rows.size())
                    .forEach(r -> row(out, r.stream().map(PlanFormat::md).toArray(String[]::new)));
        }
        for (BackendPrediction p : plan.backends()) {
            out.append("\n## ").append(md(p.backend())).append("\n\n");
            out.append(md(p.summary())).append("\n");
            list(out, "Arithmetic", p.arithmetic());
            if (!p.inputs().isEmpty()) {
                out.append("\n**Inputs**\n\n| input | value | source | where |\n|---|---|---|---|\n");
                for (Input i : p.inputs()) {
                    row(out, md(i.name()), md(i.value()), i.source().id(), md(i.where()));
                }
            }
            list(
                    out,
                    "Missing",
                    p.missing().stream()
                            .map(m -> "**" + m.name() + "**: " + m.how())
                            .toList());
            list(out, "Assumptions", p.assumptions());
            list(out, "Capacity map (largest target held at once)", surfaceLines(p));
            list(out, "Prefill floor", floorLines(p.prefillFloor()));
        }
        if (!plan.warnings().isEmpty()) {
            list(
                    out,
                    "Warnings",
                    plan.warnings().stream()
                            .map(w -> w.backend() + ": " + w.message())
                            .toList());
        }
        return out.toString();
    }

    private static void list(StringBuilder out, String title, List<String> lines) {
        if (lines.isEmpty()) {
            return;
        }
        out.append("\n**").append(title).append("**\n\n");
        for (String line : lines) {
            out.append("- ").append(md(line)).append('\n');
        }
    }

    private static void row(StringBuilder out, String... cells) {
        out.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }

    /** Pipes would end a table cell and a leading character could start markup: escape what Markdown reads. */
    private static String md(String text) {
        return text.replace("\\", "\\\\")
                .replace("|", "\\|")
                .replace("<", "&lt;")
                .replace("\n", " ");
    }

    /** The plan as JSON, keys in snake_case. */
    public static String json(Prediction plan) {
        return JSON.writeValueAsString(plan);
    }

    /** One prediction as JSON, the shape of {@code frontier.<backend>.predicted} in results.json. */
    public static String json(BackendPrediction prediction) {
        return JSON.writeValueAsString(prediction);
    }
}
