package dev.ctxprobe.predict;

import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Input;
import java.util.List;
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
