package dev.ctxprobe.hardware;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Asks the machine what accelerators it has and how much of their memory is in use. Never throws: an absent
 * tool, a failing one, a timeout or output it does not understand gives an "unknown" answer with the reason.
 */
public final class HardwareProbe {

    static final List<String> NVIDIA_GPUS = List.of(
            "nvidia-smi",
            "--query-gpu=index,name,memory.total,memory.used,driver_version",
            "--format=csv,noheader,nounits");
    static final List<String> NVIDIA_APPS =
            List.of("nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits");
    static final List<String> ROCM_MEMORY = List.of("rocm-smi", "--showmeminfo", "vram", "--json");
    static final List<String> ROCM_NAMES = List.of("rocm-smi", "--showproductname", "--json");
    static final List<String> XPU_MEMORY = List.of("xpu-smi", "-m");

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final int MAX_OUTPUT_BYTES = 256 * 1024;
    private static final long MIB_PER_GB = 1000;

    private final CommandRunner runner;
    private final Path cpuInfo;
    private final Path hostnameFile;

    /** A probe with an injected runner and files, for tests. */
    public HardwareProbe(CommandRunner runner, Path cpuInfo, Path hostnameFile) {
        this.runner = runner;
        this.cpuInfo = cpuInfo;
        this.hostnameFile = hostnameFile;
    }

    /** The probe of this machine: real tools with a 5 s limit each, {@code /proc} for CPU and host name. */
    public static HardwareProbe system() {
        return new HardwareProbe(
                new ProcessCommandRunner(TIMEOUT, MAX_OUTPUT_BYTES),
                Path.of("/proc/cpuinfo"),
                Path.of("/proc/sys/kernel/hostname"));
    }

    /** The machine's accelerators, or its CPU when no accelerator tool is installed. */
    public Hardware hardware() {
        Detection d = detect();
        if (d.devices() != null) {
            return describe(d.source(), d.devices());
        }
        if (d.reason() != null) {
            return new Hardware(
                    Hardware.UNKNOWN, Hardware.UNKNOWN, Hardware.UNKNOWN, List.of(), d.source(), d.reason());
        }
        return cpu();
    }

    /** Memory in use per device now. */
    public MemorySnapshot memoryUsed() {
        Detection d = detect();
        if (d.devices() != null) {
            return new MemorySnapshot(d.source(), d.devices(), null);
        }
        String reason = d.reason() != null
                ? d.reason()
                : "no accelerator query tool is installed (nvidia-smi, rocm-smi, xpu-smi)";
        return new MemorySnapshot(d.source(), List.of(), reason);
    }

    /** The processes holding accelerator memory, with the reason when they cannot be listed. */
    public ComputeProcesses computeProcesses() {
        CommandResult result = runner.run(NVIDIA_APPS);
        if (!result.succeeded()) {
            String why = result.failure();
            return new ComputeProcesses(
                    List.of(), result.absent() ? why + "; only nvidia-smi lists compute processes" : why);
        }
        SmiOutputs.Pids pids = SmiOutputs.nvidiaComputePids(result.stdout());
        return new ComputeProcesses(pids.pids(), pids.problem());
    }

    /** The pids holding accelerator memory; empty when none or when they cannot be listed. */
    public List<Long> computePids() {
        return computeProcesses().pids();
    }

    /** This machine's host name. */
    public String host() {
        try {
            String name = Files.readString(hostnameFile).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException e) {
            // Not Linux or no /proc: fall through to the JDK's answer.
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return Hardware.UNKNOWN;
        }
    }

    /**
     * The first tool that answers with devices wins. A tool that is installed but fails is remembered as the
     * reason, so a broken driver does not read as a CPU machine.
     */
    private Detection detect() {
        List<String> failures = new ArrayList<>();
        String failedSource = null;

        CommandResult nvidia = runner.run(NVIDIA_GPUS);
        if (nvidia.succeeded()) {
            SmiOutputs.Parsed parsed = SmiOutputs.nvidiaGpus(nvidia.stdout());
            if (parsed.ok()) {
                return new Detection("nvidia-smi", parsed.devices(), null);
            }
            failures.add(parsed.problem());
            failedSource = "nvidia-smi";
        } else if (!nvidia.absent()) {
            failures.add(nvidia.failure());
            failedSource = "nvidia-smi";
        }

        CommandResult rocm = runner.run(ROCM_MEMORY);
        if (rocm.succeeded()) {
            CommandResult names = runner.run(ROCM_NAMES);
            SmiOutputs.Parsed parsed = SmiOutputs.rocmGpus(rocm.stdout(), names.succeeded() ? names.stdout() : null);
            if (parsed.ok()) {
                return new Detection("rocm-smi", parsed.devices(), null);
            }
            failures.add(parsed.problem());
            failedSource = failedSource == null ? "rocm-smi" : failedSource;
        } else if (!rocm.absent()) {
            failures.add(rocm.failure());
            failedSource = failedSource == null ? "rocm-smi" : failedSource;
        }

        CommandResult xpu = runner.run(XPU_MEMORY);
        if (!xpu.absent()) {
            failedSource = failedSource == null ? "xpu-smi" : failedSource;
            // Intel's xpu-smi rejects -m with a usage text, often on stderr and with a non-zero exit:
            // recognise it before judging the exit code.
            if (SmiOutputs.isIntelXpuSmi(xpu.stdout() + "\n" + xpu.stderr())) {
                failures.add(SmiOutputs.INTEL_XPU_SMI);
            } else if (!xpu.succeeded()) {
                failures.add(xpu.failure());
            } else {
                SmiOutputs.Parsed parsed = SmiOutputs.kunlunDevices(xpu.stdout());
                if (parsed.ok()) {
                    return new Detection("xpu-smi", parsed.devices(), null);
                }
                failures.add(parsed.problem());
            }
        }
        if (failures.isEmpty()) {
            return new Detection("cpu", null, null);
        }
        return new Detection(failedSource, null, String.join("; ", failures));
    }

    private record Detection(String source, List<Device> devices, String reason) {}

    private static Hardware describe(String source, List<Device> devices) {
        Map<String, List<Device>> byName = new LinkedHashMap<>();
        for (Device d : devices) {
            byName.computeIfAbsent(d.name(), k -> new ArrayList<>()).add(d);
        }
        String name = byName.values().stream()
                .map(group -> group.size() + "x " + group.getFirst().name() + memorySuffix(source, group.getFirst()))
                .collect(Collectors.joining(" + "));
        String accelerator = String.join(" + ", byName.keySet());
        return new Hardware(name, accelerator, chip(accelerator), devices, source, null);
    }

    /** NVIDIA and AMD names carry the memory like {@code 143GB} (MiB / 1000, as the seeds write it). */
    private static String memorySuffix(String source, Device device) {
        if (source.equals("xpu-smi") || device.memTotalMiB() == null) {
            return "";
        }
        return " " + device.memTotalMiB() / MIB_PER_GB + "GB";
    }

    private static final Pattern MEMORY_IN_NAME = Pattern.compile("(\\d+)GB\\s*$");

    /**
     * The memory of the smallest device a hardware name states, in MiB, read back as {@link #memorySuffix} writes
     * it: {@code 8x NVIDIA H200 143GB} holds at least 143,000 MiB a device (the name keeps MiB / 1000, rounded
     * down). Null when a group of the name carries no memory.
     */
    public static Long memoryMiBInName(String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        Long smallest = null;
        for (String group : name.split(" \\+ ")) {
            Matcher m = MEMORY_IN_NAME.matcher(group.trim());
            if (!m.find()) {
                return null;
            }
            long mib = Long.parseLong(m.group(1)) * MIB_PER_GB;
            smallest = smallest == null ? mib : Math.min(smallest, mib);
        }
        return smallest == null || smallest <= 0 ? null : smallest;
    }

    /** {@code NVIDIA H200} gives {@code nvidia_h200}; a Kunlun {@code P800 XPU} gives {@code kunlun_p800}. */
    static String chip(String accelerator) {
        String base = accelerator.startsWith("Kunlun ") && accelerator.endsWith(" XPU") && !accelerator.contains("+")
                ? accelerator.substring(0, accelerator.length() - " XPU".length())
                : accelerator;
        String slug =
                base.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_|_$", "");
        return slug.isEmpty() ? Hardware.UNKNOWN : slug;
    }

    private Hardware cpu() {
        String model;
        String reason = null;
        try {
            model = SmiOutputs.cpuModel(Files.readString(cpuInfo));
        } catch (IOException e) {
            model = null;
            reason = "cannot read " + cpuInfo + ": " + e.getMessage();
        }
        String name = "cpu: " + (model != null ? model : System.getProperty("os.arch"));
        return new Hardware(name, "cpu", "cpu", List.of(), "cpu", reason);
    }
}
