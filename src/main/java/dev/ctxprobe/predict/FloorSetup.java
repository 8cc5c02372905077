package dev.ctxprobe.predict;

import dev.ctxprobe.embedded.ModelShape;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.results.PrefillFloor;
import dev.ctxprobe.roofline.Floors;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A backend's prefill floor (docs/results.md, "% of roofline") from what its prediction looked up: the model config
 * (or the embedded engine's model shape), the accelerator declared or detected, and the devices the server divides
 * a prefill over: its tensor-parallel flag, else the devices declared or detected.
 */
final class FloorSetup {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern COUNT_X = Pattern.compile("^\\s*(\\d+)\\s*x\\s", Pattern.CASE_INSENSITIVE);
    private static final String[] TENSOR_PARALLEL = {"--tensor-parallel-size", "--tp-size", "--tp", "-tp"};

    private FloorSetup() {}

    static PrefillFloor of(BackendSetup s, List<Long> targets) {
        Flags flags = s.flagsAt(targets.isEmpty() ? s.align : targets.getLast());
        boolean cpu = s.backend.engine().equals("embedded");
        ModelShape shape = null;
        Integer threads = null;
        JsonNode config = null;
        String configWhere = null;
        if (cpu) {
            shape = EmbeddedModel.shape(flags, new Facts());
            Flags.Found t = flags.find("--threads", "-t");
            Long n = t == null ? null : Flags.number(t.value());
            threads = n == null ? null : Math.toIntExact(n);
        } else {
            ModelConfig c = s.config();
            if (c != null) {
                try {
                    config = JSON.readTree(Files.readString(c.file()));
                    configWhere = c.file().toString();
                } catch (IOException | JacksonException e) {
                    config = null;
                }
            }
        }
        Integer devices = null;
        String devicesWhere = null;
        Flags.Found tp = flags.find(TENSOR_PARALLEL);
        Long tpSize = tp == null ? null : Flags.number(tp.value());
        Experiment.HardwareSpec declared = s.experiment.hardware();
        if (tpSize != null) {
            devices = Math.toIntExact(tpSize);
            devicesWhere = tp.name() + " in " + s.at() + ".command";
        } else if (s.devices() != null) {
            devices = s.devices();
            devicesWhere = "the devices declared or detected";
        } else if (declared != null && declared.name() != null) {
            Matcher x = COUNT_X.matcher(declared.name());
            if (x.find()) {
                devices = Integer.parseInt(x.group(1));
                devicesWhere = "hardware.name";
            }
        }
        return Floors.of(new Floors.Inputs(
                        config,
                        configWhere,
                        shape,
                        s.experiment.model(),
                        cpu,
                        threads,
                        accelerator(s),
                        devices,
                        devicesWhere))
                .withTargets(targets);
    }

    private static String accelerator(BackendSetup s) {
        Experiment.HardwareSpec declared = s.experiment.hardware();
        if (declared != null) {
            for (String name : new String[] {declared.accelerator(), declared.chip(), declared.name()}) {
                if (name != null && !name.isBlank()) {
                    return name;
                }
            }
        }
        Hardware detected = s.given.detected();
        if (detected != null && !detected.devices().isEmpty()) {
            return detected.devices().getFirst().name();
        }
        return null;
    }
}
