package dev.ctxprobe.bench;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.TokenRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The child JVM of the memory benchmark: sends one prompt of the given length through the real client, then
 * prints its peak resident memory ({@code VmHWM}) as one line {@code tokens ok send_ms vmhwm_kb max_heap_mb}.
 */
public final class MemoryClient {

    private MemoryClient() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        String baseUrl = args[0];
        long tokens = Long.parseLong(args[1]);
        LoadPlan plan = new LoadPlan(
                baseUrl,
                "bench",
                tokens,
                1,
                1,
                1,
                Double.POSITIVE_INFINITY,
                0,
                TokenRange.DEFAULT,
                Duration.ofMinutes(5));
        LoadResult result = new LoadRunner(plan).run();
        RequestRecord r = result.measured().getFirst();
        System.out.println(tokens + " " + r.ok() + " " + r.sendMs() + " " + statusKb("VmHWM") + " "
                + Runtime.getRuntime().maxMemory() / (1 << 20));
    }

    /** A {@code kB} field of {@code /proc/self/status}. */
    static long statusKb(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(
                        line.substring(field.length() + 1).replace("kB", "").strip());
            }
        }
        throw new IOException("no " + field + " in /proc/self/status");
    }
}
