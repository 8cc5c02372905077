package dev.ctxprobe.report;

/**
 * The {@code metadata} of a results file that a report shows; absent keys are empty strings.
 * {@code writtenByCtxprobe} is true when the file carries ctxprobe's {@code tool} key, and then a missing
 * {@code finishedAt} means the run is still going (or was interrupted).
 */
public record RunInfo(
        String experiment,
        String runId,
        String timestamp,
        String model,
        String backend,
        String engine,
        String hardware,
        String accelerator,
        String chip,
        String description,
        boolean writtenByCtxprobe,
        String finishedAt) {

    /** True for a ctxprobe run that has not written {@code finished_at} (yet). */
    public boolean inProgress() {
        return writtenByCtxprobe && finishedAt.isEmpty();
    }

    /**
     * The engine of one backend: the seeds join backends and engines with {@code +} in the same order
     * ({@code sglang} runs {@code sglang-xpu} on the P800), so the position maps one to the other.
     */
    public String engineOf(String backendName) {
        String[] backends = backend.split("\\+");
        String[] engines = engine.split("\\+");
        if (backends.length == engines.length) {
            for (int i = 0; i < backends.length; i++) {
                if (backends[i].equals(backendName)) {
                    return engines[i];
                }
            }
        }
        return engine;
    }
}
