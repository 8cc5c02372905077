package dev.ctxprobe.engine;

import dev.ctxprobe.results.ServedCapacity;
import java.util.List;
import java.util.Objects;

/** Builds a {@link ServedCapacity} from what one source said: a readiness answer or a startup log. */
final class ServedCapacityBuilder {
    Long context;
    Long maxPrompt;
    Long kv;
    Integer slots;
    Boolean kvUnified;
    Long train;
    Integer vocab;
    Long reducedFrom;
    Long cappedAt;
    Long build;
    Double maxConcurrency;
    Integer maxRunning;

    ServedCapacity build(String source) {
        return new ServedCapacity(
                        context,
                        maxPrompt,
                        kv,
                        slots,
                        kvUnified,
                        train,
                        vocab,
                        reducedFrom,
                        cappedAt,
                        build,
                        maxConcurrency,
                        maxRunning,
                        List.of(Objects.requireNonNull(source)))
                .from(source);
    }
}
