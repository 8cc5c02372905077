package dev.ctxprobe.roofline;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.results.Metadata;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.results.PrefillFloor.Peak;
import dev.ctxprobe.results.PrefillFloor.Term;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * Puts a backend's prefill floor together: the model's work ({@link ModelWork}), the device's peaks
 * ({@link Accelerators}, or {@link CpuPeak} for an engine on the CPU) and the devices the server divides the prefill
 * over (docs/results.md, "% of roofline").
 */
public final class Floors {
    private static final Pattern COUNT_X = Pattern.compile("^\\s*(\\d+)\\s*x\\s", Pattern.CASE_INSENSITIVE);

    private Floors() {}

    /**
     * What one backend's floor is built from.
     *
     * @param config the model's config.json; null when there is none
     * @param configWhere where the config was read
     * @param shape a GGUF or demo model's shape, used when there is no config; null for none
     * @param model the model as the experiment names it (a path); a known name finds ctxprobe's own config
     * @param cpu the engine computes on the CPU (the embedded engine)
     * @param threads the CPU cores the engine uses, null for all
     * @param accelerator the accelerator declared or detected; null when neither
     * @param devices how many devices the server divides a prefill over; null when unknown
     * @param devicesWhere where that count comes from
     */
    public record Inputs(
            JsonNode config,
            String configWhere,
            ModelShape shape,
            String model,
            boolean cpu,
            Integer threads,
            String accelerator,
            Integer devices,
            String devicesWhere) {}

    /** The floor of one backend; {@link PrefillFloor#unknown()} says what is missing when it cannot be given. */
    public static PrefillFloor of(Inputs in) {
        ModelWork work = work(in);
        List<Peak> peaks;
        String device;
        Integer devices = in.devices();
        String devicesWhere = in.devicesWhere();
        if (in.cpu()) {
            CpuPeak cpu = CpuPeak.detect(in.threads());
            peaks = List.of(cpu.peak());
            device = "this machine's CPU (" + cpu.cores() + " cores)";
            devices = 1;
            devicesWhere = "the CPU's cores count as one device";
        } else {
            Accelerators.Accelerator a = Accelerators.find(in.accelerator());
            if (a == null) {
                String name = in.accelerator();
                return PrefillFloor.unknown(
                        work.model(),
                        name,
                        devices,
                        name == null
                                ? "no accelerator declared (hardware.accelerator) or detected: the peak is unknown"
                                : "'" + name + "' is not in ctxprobe's table of peaks (docs/results.md): the peak is"
                                        + " unknown");
            }
            if (a.peaks().isEmpty()) {
                return PrefillFloor.unknown(work.model(), a.name(), devices, a.unknown() + ": the floor is unknown");
            }
            peaks = a.peaks();
            device = a.name();
        }
        if (work.unknown() != null) {
            return PrefillFloor.unknown(
                    work.model(), device, devices, work.unknown() + ": the model's work is unknown");
        }
        if (devices == null || devices < 1) {
            return PrefillFloor.unknown(
                    work.model(),
                    device,
                    null,
                    "the number of devices the server uses is unknown: give hardware.devices or a tensor-parallel"
                            + " flag");
        }
        List<String> assumptions = new ArrayList<>();
        assumptions.add("devices: " + devices + " (" + devicesWhere + ")");
        for (Peak p : peaks) {
            String peak = p.tflops() < 10
                    ? String.format(Locale.ROOT, "%,.1f GFLOPS", p.tflops() * 1000)
                    : String.format(Locale.ROOT, "%,.1f TFLOPS", p.tflops());
            assumptions.add(
                    "peak " + p.dtype().toUpperCase(Locale.ROOT) + ": " + peak + " a device (" + p.source() + ")");
        }
        assumptions.add("linear: " + work.linear());
        for (Term t : work.terms()) {
            assumptions.add(t.part() + ": " + ModelWork.layers(t.layers()) + ", " + t.label());
        }
        assumptions.addAll(work.notes());
        assumptions.add("not counted: memory traffic, communication between devices, the LM head (it runs for"
                + " generated tokens), the TTFT's queueing and network time");
        return new PrefillFloor(
                work.model(),
                work.linearFlopsPerToken(),
                work.linear(),
                work.terms(),
                device,
                devices,
                peaks,
                assumptions,
                null,
                List.of());
    }

    private static ModelWork work(Inputs in) {
        if (in.config() != null) {
            return ModelWork.of(in.config(), in.configWhere());
        }
        if (in.shape() != null) {
            return ModelWork.of(in.shape());
        }
        KnownModels.Carried carried = KnownModels.byName(in.model());
        if (carried != null) {
            return ModelWork.of(carried.config(), "ctxprobe's config of " + carried.name() + " (by the model's name)");
        }
        return ModelWork.unknown(in.model(), "no model config (model_config or {model}/config.json)");
    }

    /**
     * The floor of a results file's steps from its metadata, for files that carry none (the seeds): the model by its
     * name, the accelerator as recorded, the devices from the tensor-parallel size in its config or the count in its
     * hardware name ({@code 8x NVIDIA H200}).
     */
    public static PrefillFloor ofResults(Metadata m, Map<String, Object> config) {
        Integer devices = null;
        String where = null;
        Object tp = config == null ? null : config.get("tp");
        if (tp instanceof Number n) {
            devices = n.intValue();
            where = "config tp";
        } else if (m != null && m.hardware() != null) {
            Matcher x = COUNT_X.matcher(m.hardware());
            if (x.find()) {
                devices = Integer.parseInt(x.group(1));
                where = "metadata.hardware";
            }
        }
        String accelerator = m == null ? null : m.accelerator() != null ? m.accelerator() : m.chip();
        return of(new Inputs(null, null, null, m == null ? null : m.model(), false, null, accelerator, devices, where));
    }
}
