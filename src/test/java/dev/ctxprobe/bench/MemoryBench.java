package dev.ctxprobe.bench;

import dev.ctxprobe.client.TokenRange;
import dev.ctxprobe.testengine.TestEngines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Client memory: one child JVM per prompt, started as {@code ./ctxprobe} starts ctxprobe (no {@code -Xmx} unless
 * asked), sends one 1M or 10M-token prompt through the real client to a server that discards the body, and
 * reports its peak resident memory.
 */
final class MemoryBench {

    private static final long[] TOKENS = {1_000_000, 10_000_000};

    private MemoryBench() {}

    static List<Figure> run(Bench.Options options) throws Exception {
        List<Figure> figures = new ArrayList<>();
        List<String> heaps = new ArrayList<>();
        heaps.add(null);
        if (options.xmx() != null) {
            heaps.add(options.xmx());
        }
        try (StampingServer server = new StampingServer(TokenRange.DEFAULT, 1, 0, 0)) {
            for (String heap : heaps) {
                for (long tokens : TOKENS) {
                    figures.add(Bench.emit(measure(server.baseUrl(), tokens, heap)));
                }
            }
        }
        return figures;
    }

    private static Figure measure(String baseUrl, long tokens, String xmx) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(
                List.of(TestEngines.javaBin(), "--enable-native-access=ALL-UNNAMED", "-Djava.awt.headless=true"));
        if (xmx != null) {
            cmd.add("-Xmx" + xmx);
        }
        cmd.addAll(
                List.of("-cp", TestEngines.classpath(), MemoryClient.class.getName(), baseUrl, Long.toString(tokens)));
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try {
            out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!child.waitFor(5, TimeUnit.MINUTES) || child.exitValue() != 0) {
                throw new IllegalStateException("memory client for " + tokens + " tokens failed: " + out);
            }
        } finally {
            child.destroyForcibly();
        }
        String[] f = out.lines().reduce((a, b) -> b).orElseThrow().split(" ");
        if (!Boolean.parseBoolean(f[1])) {
            throw new IllegalStateException("the " + tokens + "-token request failed: " + out);
        }
        double peakMb = Long.parseLong(f[3]) / 1024.0;
        long limitMb = tokens <= 1_000_000 ? 256 : 512;
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("prompt_tokens", Bench.tokenLabel(tokens));
        params.put("heap", xmx == null ? "default(max " + f[4] + "MB)" : "-Xmx" + xmx);
        params.put("send_ms", Figure.round(Double.parseDouble(f[2])));
        return new Figure(
                "memory", "peak_rss_mb", params, Figure.single(peakMb), "MB", "< " + limitMb + " MB", peakMb < limitMb);
    }
}
