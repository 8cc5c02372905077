package dev.ctxprobe.bench;

import dev.ctxprobe.client.Carriers;
import dev.ctxprobe.client.LoadPlan;
import dev.ctxprobe.client.LoadResult;
import dev.ctxprobe.client.LoadRunner;
import dev.ctxprobe.client.ReadLimits;
import dev.ctxprobe.client.RequestRecord;
import dev.ctxprobe.client.TokenRange;
import java.time.Duration;

/**
 * ctxprobe's client as its own process, as {@code ctxprobe run} drives it: the real {@link LoadRunner} with one
 * warm-up request. {@code ClientPass URL STREAMS REQUESTS TOKENS EVENTS PASSES} runs the plan {@code PASSES} times in
 * this JVM (2 or more: a warm JVM) and prints {@code index first_event_nanos send_ms} for the last pass.
 */
final class ClientPass {

    private ClientPass() {}

    public static void main(String[] args) throws Exception {
        // As ctxprobe's own main does first.
        Carriers.configure();
        String url = args[0];
        int streams = Integer.parseInt(args[1]);
        int requests = Integer.parseInt(args[2]);
        long tokens = Long.parseLong(args[3]);
        int events = Integer.parseInt(args[4]);
        int passes = Integer.parseInt(args[5]);
        LoadResult result = null;
        for (int pass = 0; pass < passes; pass++) {
            LoadPlan plan = new LoadPlan(
                    url,
                    "bench",
                    tokens,
                    events,
                    requests,
                    streams,
                    Double.POSITIVE_INFINITY,
                    1,
                    TokenRange.DEFAULT,
                    Duration.ofMinutes(5),
                    null,
                    ReadLimits.forOutput(events));
            result = new LoadRunner(plan).run();
        }
        StringBuilder out = new StringBuilder();
        for (RequestRecord r : result.measured()) {
            if (!r.ok() || r.choiceEvents() != events) {
                System.err.println("request " + r.index() + " did not stream as served: " + r.outcome() + " "
                        + r.errorText() + " (" + r.choiceEvents() + " events)");
                System.exit(1);
            }
            out.append(r.index())
                    .append(' ')
                    .append(r.tFirstNanos())
                    .append(' ')
                    .append(r.sendMs())
                    .append('\n');
        }
        System.out.print(out);
    }
}
