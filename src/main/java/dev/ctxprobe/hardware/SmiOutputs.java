package dev.ctxprobe.hardware;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Parsers for the accelerator tools' outputs, kept apart from running them so recorded outputs test them. */
public final class SmiOutputs {

    /** The devices a tool's output lists, or why they could not be read ({@code devices} is then empty). */
    public record Parsed(List<Device> devices, String problem) {
        public Parsed {
            devices = List.copyOf(devices);
        }

        static Parsed problem(String problem) {
            return new Parsed(List.of(), problem);
        }

        public boolean ok() {
            return problem == null;
        }
    }

    /** The pids a tool's output lists, or why they could not be read. */
    public record Pids(List<Long> pids, String problem) {
        public Pids {
            pids = List.copyOf(pids);
        }
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern INTEGER = Pattern.compile("\\d+");
    private static final Pattern KUNLUN_MODEL = Pattern.compile("(?i)[PR]\\d{3}[A-Za-z0-9]*");
    private static final long MIB = 1024L * 1024L;
    /** Why an Intel {@code xpu-smi} gives no devices. */
    public static final String INTEL_XPU_SMI =
            "xpu-smi is Intel's XPU Manager, not Kunlun's tool; Intel GPUs are not queried";

    /** Kunlun's {@code xpu-smi -m}: fields 18 and 19 (1-based) of a device line are used and total MiB. */
    private static final int KUNLUN_USED_FIELD = 17;

    private static final int KUNLUN_TOTAL_FIELD = 18;

    private SmiOutputs() {}

    /** {@code nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version --format=csv,noheader,nounits}. */
    public static Parsed nvidiaGpus(String output) {
        List<Device> devices = new ArrayList<>();
        for (String line : nonBlankLines(output)) {
            String[] f = line.split("\\s*,\\s*");
            if (f.length < 4 || !INTEGER.matcher(f[0].strip()).matches() || f[1].isBlank()) {
                return Parsed.problem("unexpected nvidia-smi output: " + head(line));
            }
            devices.add(new Device(Integer.parseInt(f[0].strip()), f[1].strip(), mib(f[2]), mib(f[3])));
        }
        return devices.isEmpty() ? Parsed.problem("nvidia-smi listed no GPU") : new Parsed(devices, null);
    }

    /** {@code nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits}. */
    public static Pids nvidiaComputePids(String output) {
        List<Long> pids = new ArrayList<>();
        for (String line : nonBlankLines(output)) {
            if (line.toLowerCase(Locale.ROOT).contains("no running processes found")) {
                continue;
            }
            String pid = line.split(",")[0].strip();
            if (!INTEGER.matcher(pid).matches()) {
                return new Pids(List.of(), "unexpected nvidia-smi output: " + head(line));
            }
            pids.add(Long.parseLong(pid));
        }
        return new Pids(pids, null);
    }

    /**
     * {@code rocm-smi --showmeminfo vram --json}, named from {@code rocm-smi --showproductname --json} when that
     * output is usable (else "AMD GPU").
     */
    public static Parsed rocmGpus(String memInfoJson, String productNameJson) {
        JsonNode mem = json(memInfoJson);
        if (mem == null || !mem.isObject()) {
            return Parsed.problem("unexpected rocm-smi output: " + head(memInfoJson));
        }
        JsonNode products = json(productNameJson);
        List<Device> devices = new ArrayList<>();
        for (Map.Entry<String, JsonNode> card : mem.properties()) {
            if (!card.getKey().toLowerCase(Locale.ROOT).startsWith("card")) {
                continue;
            }
            String digits = card.getKey().substring("card".length());
            Long total = bytesToMib(field(card.getValue(), "vram total memory"));
            Long used = bytesToMib(field(card.getValue(), "vram total used memory"));
            if (!INTEGER.matcher(digits).matches() || total == null) {
                return Parsed.problem("unexpected rocm-smi output for " + card.getKey());
            }
            String name = products == null ? null : field(products.path(card.getKey()), "card series");
            devices.add(new Device(
                    Integer.parseInt(digits), name == null || name.isBlank() ? "AMD GPU" : name.strip(), total, used));
        }
        return devices.isEmpty() ? Parsed.problem("rocm-smi listed no GPU") : new Parsed(devices, null);
    }

    /**
     * {@code xpu-smi -m}. Kunlun and Intel both ship a tool of that name: only Kunlun's one-line-per-device
     * output (at least 19 whitespace fields, 18 and 19 numeric) is read; Intel's is recognised and refused.
     */
    public static Parsed kunlunDevices(String output) {
        if (isIntelXpuSmi(output)) {
            return Parsed.problem(INTEL_XPU_SMI);
        }
        List<Device> devices = new ArrayList<>();
        for (String line : nonBlankLines(output)) {
            String[] f = line.strip().split("\\s+");
            if (f.length <= KUNLUN_TOTAL_FIELD
                    || !INTEGER.matcher(f[KUNLUN_USED_FIELD]).matches()
                    || !INTEGER.matcher(f[KUNLUN_TOTAL_FIELD]).matches()) {
                return Parsed.problem("unexpected xpu-smi -m output (not Kunlun's device lines): " + head(line));
            }
            int index = INTEGER.matcher(f[0]).matches() ? Integer.parseInt(f[0]) : devices.size();
            String name = "Kunlun XPU";
            for (String field : f) {
                if (KUNLUN_MODEL.matcher(field).matches()) {
                    name = "Kunlun " + field.toUpperCase(Locale.ROOT) + " XPU";
                    break;
                }
            }
            devices.add(new Device(
                    index, name, Long.parseLong(f[KUNLUN_TOTAL_FIELD]), Long.parseLong(f[KUNLUN_USED_FIELD])));
        }
        return devices.isEmpty() ? Parsed.problem("xpu-smi -m listed no device") : new Parsed(devices, null);
    }

    /** True when an {@code xpu-smi} output (stdout and stderr) comes from Intel's tool of that name. */
    public static boolean isIntelXpuSmi(String output) {
        String text = output.toLowerCase(Locale.ROOT);
        return text.contains("intel") || text.contains("level zero") || text.contains("run with --help");
    }

    /** The {@code model name} of {@code /proc/cpuinfo}, or null when it has none (e.g. some ARM kernels). */
    public static String cpuModel(String cpuInfo) {
        for (String line : nonBlankLines(cpuInfo)) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).strip().equalsIgnoreCase("model name")) {
                return line.substring(colon + 1).strip().replaceAll("\\s+", " ");
            }
        }
        return null;
    }

    private static List<String> nonBlankLines(String text) {
        return text.lines().filter(l -> !l.isBlank()).toList();
    }

    private static Long mib(String field) {
        String s = field.strip();
        return INTEGER.matcher(s).matches() ? Long.valueOf(s) : null;
    }

    private static Long bytesToMib(String bytes) {
        return bytes != null && INTEGER.matcher(bytes.strip()).matches() ? Long.parseLong(bytes.strip()) / MIB : null;
    }

    /** The text of the first key that starts with {@code prefix}, ignoring case (rocm-smi's keys vary). */
    private static String field(JsonNode object, String prefix) {
        for (Iterator<Map.Entry<String, JsonNode>> it = object.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().toLowerCase(Locale.ROOT).startsWith(prefix)
                    && e.getValue().isValueNode()) {
                return e.getValue().asString();
            }
        }
        return null;
    }

    /** The JSON object in a tool's output, which may start with warning lines; null when there is none. */
    private static JsonNode json(String output) {
        if (output == null) {
            return null;
        }
        int start = output.indexOf('{');
        if (start < 0) {
            return null;
        }
        try {
            return JSON.readTree(output.substring(start));
        } catch (JacksonException notJson) {
            // Unusable output is an answer here, not an error: the caller reports it as the reason.
            return null;
        }
    }

    private static String head(String text) {
        String line = text == null ? "" : text.strip().lines().findFirst().orElse("");
        return line.length() > 120 ? line.substring(0, 120) + "…" : line;
    }
}
