package dev.ctxprobe.report;

import java.util.List;

/** ctxprobe's {@code server} object of a step, as far as the file knows it (unknown values are null). */
public record ServerInfo(
        Double startupS,
        String readyVia,
        Long pid,
        Long exitCode,
        Boolean stoppedCleanly,
        List<Long> leftoverPids,
        Long kvCapacityTokens,
        Long maxContextHint) {

    public ServerInfo {
        leftoverPids = List.copyOf(leftoverPids);
    }
}
