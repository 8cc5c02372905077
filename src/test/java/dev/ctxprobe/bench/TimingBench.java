package dev.ctxprobe.bench;

import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.TokenRange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Client timing error: the real {@link LoadRunner} against a {@link StampingServer} in the same JVM; the error
 * of each arrival time the client records is its stamp minus the server's stamp of that event's first byte.
 */
final class TimingBench {

    /** Spec 07: the client adds at most 1 ms (p99) to TTFT. */
    static final double BAR_MS = 1.0;

    private static final long STREAM_PROMPT = 1_000;
    private static final double PREFILL_MS = 5;
    private static final double GAP_MS = 2;

    private TimingBench() {}

    static List<Figure> run(Bench.Options options) throws Exception {
        List<Figure> figures = new ArrayList<>();
        try (StampingServer server = new StampingServer(TokenRange.DEFAULT, options.events(), PREFILL_MS, GAP_MS)) {
            for (int streams : options.streams()) {
                int requests = Math.max(streams, 10 * options.reps());
                figures.addAll(measure(server, options, streams, requests, STREAM_PROMPT));
            }
            for (long tokens : options.prompts()) {
                figures.addAll(measure(server, options, 1, options.reps(), tokens));
            }
        }
        return figures;
    }

    private static List<Figure> measure(
            StampingServer server, Bench.Options options, int streams, int requests, long tokens)
            throws InterruptedException {
        server.clear();
        LoadPlan plan = new LoadPlan(
                server.baseUrl(),
                "bench",
                tokens,
                options.events(),
                requests,
                streams,
                Double.POSITIVE_INFINITY,
                1,
                TokenRange.DEFAULT,
                Duration.ofMinutes(5));
        CpuMeter clientCost = new CpuMeter();
        LoadResult result = new LoadRunner(plan).run();
        double clientCpuMs = clientCost.cpuMs();
        long clientGcMs = clientCost.gcMs();
        List<Double> ttft = new ArrayList<>();
        List<Double> itl = new ArrayList<>();
        List<Double> send = new ArrayList<>();
        for (RequestRecord r : result.measured()) {
            long[] stamps = server.stamps(r.index());
            if (!r.ok() || stamps == null || r.choiceEvents() != stamps.length) {
                throw new IllegalStateException("request " + r.index() + " did not stream as served: " + r.outcome()
                        + " " + r.errorText() + " (" + r.choiceEvents() + " events)");
            }
            ttft.add((r.tFirstNanos() - stamps[0]) / 1e6);
            for (int i = 0; i < r.itlMs().size(); i++) {
                itl.add(r.itlMs().get(i) - (stamps[i + 1] - stamps[i]) / 1e6);
            }
            send.add(r.sendMs());
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("streams", streams);
        params.put("prompt_tokens", Bench.tokenLabel(tokens));
        params.put("load1", clientCost.load1);
        List<Figure> figures = new ArrayList<>();
        Map<String, Number> ttftSpread = Figure.spread(array(ttft));
        boolean meets = ttftSpread.get("p99").doubleValue() <= BAR_MS;
        figures.add(Bench.emit(new Figure("timing", "ttft_error_ms", params, ttftSpread, "ms", "p99 <= 1 ms", meets)));
        figures.add(
                Bench.emit(new Figure("timing", "itl_error_ms", params, Figure.spread(array(itl)), "ms", "", null)));
        double events = (double) requests * options.events();
        Map<String, Object> clientParams = new LinkedHashMap<>(params);
        clientParams.put("gc_ms", clientGcMs);
        figures.add(Bench.emit(new Figure(
                "timing",
                "cpu_us_per_event",
                clientParams,
                Figure.single(clientCpuMs * 1000 / events),
                "us",
                "",
                null)));
        if (tokens == STREAM_PROMPT) {
            CpuMeter floorCost = new CpuMeter();
            double[] floor = array(RawStreams.firstEventErrors(server, streams, requests, tokens, options.events()));
            double floorCpuMs = floorCost.cpuMs();
            Map<String, Object> floorParams = new LinkedHashMap<>(params);
            floorParams.put("load1", floorCost.load1);
            figures.add(Bench.emit(new Figure(
                    "timing", "floor_first_event_error_ms", floorParams, Figure.spread(floor), "ms", "", null)));
            floorParams.put("gc_ms", floorCost.gcMs());
            figures.add(Bench.emit(new Figure(
                    "timing",
                    "floor_cpu_us_per_event",
                    floorParams,
                    Figure.single(floorCpuMs * 1000 / events),
                    "us",
                    "",
                    null)));
        }
        figures.add(Bench.emit(new Figure("timing", "send_ms", params, Figure.spread(array(send)), "ms", "", null)));
        return figures;
    }

    private static double[] array(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
