package dev.ctxprobe.results;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** The document a run starts with: the seeds' metadata and config, filled from the experiment. */
public final class NewRun {
    /** run_id format of the seeds: UTC {@code yyyyMMdd-HHmmss}. */
    public static final DateTimeFormatter RUN_ID = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ssxxx");

    private NewRun() {}

    /** Hardware as recorded: from the experiment file, or detected. */
    public record HardwareFacts(String hardware, String accelerator, String chip) {}

    /** Where and how the run happens, beside the experiment. */
    public record Context(
            String runId,
            OffsetDateTime started,
            String host,
            String toolVersion,
            String script,
            String pythonEnv,
            Provenance.Git git) {}

    public static ResultDocument document(
            Experiment e, List<Backend> backends, Experiment.Strategy strategy, HardwareFacts hw, Context ctx) {
        String start = ctx.started().withOffsetSameInstant(ZoneOffset.UTC).format(TIMESTAMP);
        Metadata m = new Metadata(
                e.name(),
                ctx.runId(),
                start,
                e.model(),
                backends.stream().map(Backend::name).collect(Collectors.joining("+")),
                backends.stream().map(Backend::engine).distinct().collect(Collectors.joining("+")),
                hw.hardware(),
                hw.accelerator(),
                hw.chip(),
                ctx.script(),
                ctx.pythonEnv(),
                ctx.git().commit(),
                ctx.git().dirty(),
                e.description(),
                new Metadata.Tool("ctxprobe", ctx.toolVersion()),
                ctx.host(),
                start,
                null,
                Metadata.SCHEMA_VERSION);
        return new ResultDocument(m, config(e, strategy), List.of(), Map.of());
    }

    /** The seeds' config keys in their order (vars, visible devices, load, pad), then ctxprobe's. */
    static Map<String, Object> config(Experiment e, Experiment.Strategy strategy) {
        Map<String, Object> c = new LinkedHashMap<>(e.vars());
        e.env().forEach((k, v) -> {
            if (k.endsWith("_VISIBLE_DEVICES")) {
                c.put(k.toLowerCase(Locale.ROOT), v);
            }
        });
        Experiment.Load load = e.load();
        c.put("output_len", load.outputLen());
        c.put("num_prompts", load.numPrompts());
        c.put("max_concurrency", load.maxConcurrency());
        c.put("request_rate", rate(load.requestRate()));
        c.put("context_pad", e.contextPad());
        c.put("warmup", load.warmup());
        c.put("strategy", strategy.id());
        c.put("restart", e.sweep().restart().name().toLowerCase(Locale.ROOT));
        if (strategy == Experiment.Strategy.LIST) {
            c.put("targets", e.sweep().targets());
        } else {
            Experiment.Frontier f = e.sweep().frontier();
            Map<String, Object> fm = new LinkedHashMap<>();
            fm.put("min", f.min());
            fm.put("max", f.max());
            fm.put("precision", f.precision());
            fm.put("align", f.align());
            fm.put("max_launches", f.maxLaunches());
            fm.put("start", f.start().id());
            c.put("frontier", fm);
            if (e.sweep().autoConcurrency()) {
                c.put("concurrency", "auto");
            } else if (e.sweep().concurrency().size() > 1) {
                c.put("concurrency", e.sweep().concurrency());
            }
            if (!e.sweep().curve().isEmpty()) {
                c.put("curve", e.sweep().curve());
            }
        }
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("startup_s", e.timeouts().startup().toMillis() / 1000.0);
        t.put("request_s", e.timeouts().request().toMillis() / 1000.0);
        t.put("shutdown_s", e.timeouts().shutdown().toMillis() / 1000.0);
        t.put("queue_s", e.timeouts().queue().toMillis() / 1000.0);
        t.put("fatal_grace_s", e.timeouts().fatalGrace().toMillis() / 1000.0);
        t.put("stall_s", e.timeouts().stall().toMillis() / 1000.0);
        t.put("progress_s", e.timeouts().progress().toMillis() / 1000.0);
        c.put("timeouts", t);
        c.put("verify", load.lenientVerify() ? "lenient" : "strict");
        // Vars a backend sets for itself would be lost in one flat map: they go per backend.
        Map<String, Object> own = new LinkedHashMap<>();
        for (Backend b : e.backends()) {
            Map<String, Object> diff = new LinkedHashMap<>();
            b.vars().forEach((k, v) -> {
                if (!v.equals(e.vars().get(k))) {
                    diff.put(k, v);
                }
            });
            b.env().forEach((k, v) -> {
                if (k.endsWith("_VISIBLE_DEVICES") && !v.equals(e.env().get(k))) {
                    diff.put(k.toLowerCase(Locale.ROOT), v);
                }
            });
            if (!diff.isEmpty()) {
                own.put(b.name(), diff);
            }
        }
        if (!own.isEmpty()) {
            c.put("backend_vars", own);
        }
        // Each backend's matrix in the file's order, so that reports lay out its grid in the user's order.
        Map<String, Map<String, List<String>>> matrix = MatrixGrid.orderOf(e.backends().stream()
                .map(b -> new MatrixGrid.Cell(b.name(), b.params()))
                .toList());
        if (!matrix.isEmpty()) {
            c.put("matrix", matrix);
        }
        return c;
    }

    // The seeds write a whole rate as an integer; JSON has no infinity, so "inf" is written as text.
    private static Object rate(double r) {
        if (Double.isInfinite(r)) {
            return "inf";
        }
        return r == Math.rint(r) ? (Object) (long) r : (Object) r;
    }

    public static String timestamp(OffsetDateTime t) {
        return t.withOffsetSameInstant(ZoneOffset.UTC).format(TIMESTAMP);
    }
}
