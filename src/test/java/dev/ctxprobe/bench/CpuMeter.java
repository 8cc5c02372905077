package dev.ctxprobe.bench;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a stretch of the benchmark cost this JVM: process CPU time and GC time, and how loaded the machine was
 * (the 1-minute load average) when it began. Separates the client's own cost from the machine's contention.
 */
final class CpuMeter {
    private static final OperatingSystemMXBean OS =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private final long cpuNanos = OS.getProcessCpuTime();
    private final long gcMillis = gcMillis();
    final double load1 = load1();

    /** CPU time this process used since the meter was made, in ms. */
    double cpuMs() {
        return (OS.getProcessCpuTime() - cpuNanos) / 1e6;
    }

    /** Time spent in garbage collection since the meter was made, in ms. */
    long gcMs() {
        return gcMillis() - gcMillis;
    }

    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    private static double load1() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
