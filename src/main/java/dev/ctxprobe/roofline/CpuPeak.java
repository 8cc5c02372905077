package dev.ctxprobe.roofline;

import dev.ctxprobe.results.PrefillFloor.Peak;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A CPU's FP32 peak: cores x clock x FLOPs a cycle of its vector unit with two FMA pipes (AVX-512: 64, AVX2 with
 * FMA: 32, NEON: 16, else 8). Every choice is the generous one (the highest clock the machine names, two FMA pipes),
 * so the peak stays above what the CPU does and the floor below any real prefill; CpuPeakTest holds it against a
 * measured matrix multiply (docs/results.md, "Peaks").
 *
 * @param cores the cores the engine computes on
 * @param ghz the clock used
 * @param flopsPerCycle FP32 FLOPs a core does in a cycle
 * @param how where each figure comes from
 */
public record CpuPeak(int cores, double ghz, int flopsPerCycle, String how) {

    private static final Pattern NAMED_GHZ = Pattern.compile("@\\s*([0-9.]+)\\s*GHz");

    /** This machine, computing on {@code threads} cores (null: all it has). */
    public static CpuPeak detect(Integer threads) {
        int available = Runtime.getRuntime().availableProcessors();
        int cores = threads == null ? available : Math.max(1, Math.min(threads, available));
        String cpuinfo = read(Path.of("/proc/cpuinfo"));
        double mhz = 0;
        String clockFrom = null;
        String max = read(Path.of("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
                .strip();
        if (!max.isEmpty()) {
            mhz = Double.parseDouble(max) / 1000;
            clockFrom = "cpuinfo_max_freq";
        }
        for (String line : cpuinfo.split("\n")) {
            if (line.startsWith("cpu MHz")) {
                double v =
                        Double.parseDouble(line.substring(line.indexOf(':') + 1).strip());
                if (v > mhz) {
                    mhz = v;
                    clockFrom = "/proc/cpuinfo cpu MHz";
                }
            }
            Matcher named = NAMED_GHZ.matcher(line);
            if (line.startsWith("model name") && named.find() && Double.parseDouble(named.group(1)) * 1000 > mhz) {
                mhz = Double.parseDouble(named.group(1)) * 1000;
                clockFrom = "the model name";
            }
        }
        if (mhz == 0) {
            // No clock the machine names: 5 GHz is above any server CPU's, so the peak stays an upper bound.
            mhz = 5000;
            clockFrom = "no clock found, 5 GHz assumed";
        }
        String flags = "";
        for (String line : cpuinfo.split("\n")) {
            if (line.startsWith("flags") || line.startsWith("Features")) {
                flags = " " + line.substring(line.indexOf(':') + 1).strip() + " ";
                break;
            }
        }
        int perCycle;
        String unit;
        if (flags.contains(" avx512f ")) {
            perCycle = 64;
            unit = "AVX-512";
        } else if (flags.contains(" avx2 ") && flags.contains(" fma ")) {
            perCycle = 32;
            unit = "AVX2 + FMA";
        } else if (flags.contains(" asimd ") || System.getProperty("os.arch").contains("aarch64")) {
            perCycle = 16;
            unit = "NEON";
        } else {
            perCycle = 8;
            unit = "SSE";
        }
        String how = cores + (threads == null ? " cores" : " cores (--threads)") + " x "
                + String.format(Locale.ROOT, "%.2f GHz", mhz / 1000) + " (" + clockFrom + ") x " + perCycle
                + " FP32 FLOPs a cycle (" + unit + ", two FMA pipes)";
        return new CpuPeak(cores, mhz / 1000, perCycle, how);
    }

    /** The peak of all the cores together, in TFLOPS. */
    public double tflops() {
        return cores * ghz * flopsPerCycle / 1000;
    }

    /** As a peak of the floor's table: the cores count as one device. */
    public Peak peak() {
        return new Peak("fp32", tflops(), how);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }
}
