package dev.ctxprobe.launch;

import java.time.Duration;
import java.util.List;

/**
 * How a server's process group ended.
 *
 * @param stoppedCleanly the whole group was gone after TERM, without KILL
 * @param leftoverPids processes of the group still alive after KILL (should be none)
 * @param exitCode the leader's exit code, null when unknown
 */
public record StopReport(boolean stoppedCleanly, List<Long> leftoverPids, Integer exitCode, Duration took) {}
